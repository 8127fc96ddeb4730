/**
 * The pages restate no API: their record type, its parts and their filter lists are checked here
 * against docs/openapi.yaml (the contract) and src/rules/build-classes.ts (the triggers' one list).
 * The pages' types and lists are read from their source with the TypeScript parser (the pages run
 * in a browser, not here), so a field added to a page
 * that the API does not answer, or required by a page and optional in the API, fails here.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import ts from 'typescript';
import { BUILD_PHASES } from '../../../../src/builds/types.js';
import { BUILD_TRIGGERS } from '../../../../src/rules/build-classes.js';
import { loadOpenApi } from '../../../helpers/openapi.js';

interface Schema {
  readonly enum?: readonly string[];
  readonly required?: readonly string[];
  readonly properties?: Record<string, Schema>;
  readonly items?: Schema;
  readonly $ref?: string;
}

const doc = loadOpenApi() as unknown as {
  components: { schemas: Record<string, Schema> };
  paths: Record<string, { get?: { parameters?: { name: string; in: string; schema: Schema }[] } }>;
};
const resolve = (schema: Schema): Schema =>
  schema.$ref === undefined ? schema : (doc.components.schemas[schema.$ref.split('/').pop() ?? ''] ?? {});
const RECORD = doc.components.schemas.BuildRecord ?? {};
const property = (schema: Schema, name: string): Schema => resolve(schema.properties?.[name] ?? {});
const itemsOf = (schema: Schema): Schema => resolve(schema.items ?? {});
const queryEnum = (name: string): readonly string[] | undefined =>
  doc.paths['/builds']?.get?.parameters?.find((p) => p.in === 'query' && p.name === name)?.schema.enum;

const pageSource = (file: string): ts.SourceFile =>
  ts.createSourceFile(
    file,
    readFileSync(new URL(`../../../../src/ui/pages/${file}`, import.meta.url), 'utf8'),
    ts.ScriptTarget.ES2022,
  );

/** The strings of the array constant `name` of a page's source. */
function pageList(file: string, name: string): string[] {
  for (const node of pageSource(file).statements) {
    if (!ts.isVariableStatement(node)) continue;
    for (const declaration of node.declarationList.declarations) {
      const init = declaration.initializer;
      if (ts.isIdentifier(declaration.name) && declaration.name.text === name && init !== undefined)
        if (ts.isArrayLiteralExpression(init))
          return init.elements.filter(ts.isStringLiteral).map((element) => element.text);
    }
  }
  return [];
}

/** Each interface of the pages' API module: its fields and whether each is optional. */
function pageInterfaces(): Map<string, Map<string, boolean>> {
  const source = pageSource('api.ts');
  const out = new Map<string, Map<string, boolean>>();
  for (const node of source.statements) {
    if (!ts.isInterfaceDeclaration(node)) continue;
    const fields = new Map<string, boolean>();
    for (const member of node.members)
      if (ts.isPropertySignature(member) && ts.isIdentifier(member.name))
        fields.set(member.name.text, member.questionToken !== undefined);
    out.set(node.name.text, fields);
  }
  return out;
}

/** Each page interface and the part of the record it stands for. */
const PARTS: Record<string, Schema> = {
  Build: RECORD,
  PlatformBuilder: itemsOf(property(RECORD, 'builders')),
  Stage: itemsOf(property(RECORD, 'stages')),
  Step: itemsOf(property(RECORD, 'steps')),
  Pushed: property(RECORD, 'pushed'),
  KeyInfo: property(RECORD, 'key'),
};

test("each field of the pages' build record is the API's, required only where the API requires it", (t) => {
  const interfaces = pageInterfaces();
  for (const [name, schema] of Object.entries(PARTS)) {
    const fields = interfaces.get(name);
    t.truthy(fields, `src/ui/pages/api.ts declares ${name}`);
    t.truthy(schema.properties, `docs/openapi.yaml describes the part ${name} stands for`);
    for (const [field, optional] of fields ?? []) {
      t.true(field in (schema.properties ?? {}), `${name}.${field} is answered by the API`);
      if (!optional) t.true(schema.required?.includes(field), `${name}.${field}: required by the API too`);
    }
  }
});

test('the triggers are one list: the rules, the record and the /builds filter say the same', (t) => {
  t.deepEqual(property(RECORD, 'trigger').enum, [...BUILD_TRIGGERS]);
  t.deepEqual(queryEnum('trigger'), [...BUILD_TRIGGERS]);
});

test("the pages' status filter: a build not finished, then each status the record can end with", (t) => {
  const statuses = pageList('builds-page.ts', 'STATUSES');
  t.deepEqual(statuses, ['queued', 'running', ...(property(RECORD, 'status').enum ?? [])]);
  for (const status of statuses) t.true(queryEnum('status')?.includes(status), status);
});

test("the record's phases are the API's", (t) => {
  t.deepEqual(property(RECORD, 'phase').enum, [...BUILD_PHASES]);
});
