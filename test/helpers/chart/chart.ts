// Shared by the chart tests: the chart's files, Helm's values merge, and the schema validator.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

export const CHART_DIR = join(import.meta.dirname, '..', '..', '..', 'k8s', 'image-build-service');
export const VALUES_DIR = join(import.meta.dirname, '..', '..', 'unit', 'k8s', 'values');

export type Values = Record<string, unknown>;
export type JsonSchema = Record<string, unknown>;

export const readChartFile = (name: string): string => readFileSync(join(CHART_DIR, name), 'utf8');
export const defaultValues = (): Values => parse(readChartFile('values.yaml')) as Values;
export const valuesSchema = (): JsonSchema => JSON.parse(readChartFile('values.schema.json')) as JsonSchema;

const isMap = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Helm's merge of a user values file over values.yaml: maps merge, anything else replaces, null deletes. */
export function mergeValues(base: Values, override: Values): Values {
  const out: Values = { ...base };
  for (const [key, value] of Object.entries(override)) {
    if (value === null) delete out[key];
    else if (isMap(value) && isMap(out[key])) out[key] = mergeValues(out[key], value);
    else out[key] = value;
  }
  return out;
}

let compiled: ValidateFunction | undefined;
/** Validates merged values as `helm install` does (JSON schema draft-07). */
export function validateValues(values: Values): ErrorObject[] {
  compiled ??= new Ajv({
    allErrors: true,
    strict: true,
    strictRequired: false,
    allowUnionTypes: true,
  }).compile(valuesSchema());
  return compiled(values) ? [] : [...(compiled.errors ?? [])];
}

export interface ValuesFile {
  name: string;
  values: Values;
  /** From a `# expect: <instancePath> <keyword>` first line (invalid files). */
  expect?: { instancePath: string; keyword: string };
}

export function valuesFiles(kind: 'valid' | 'invalid'): ValuesFile[] {
  const dir = join(VALUES_DIR, kind);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((name) => {
      const text = readFileSync(join(dir, name), 'utf8');
      const m = /^# expect: (\S*) (\S+)$/m.exec(text.split('\n')[0] ?? '');
      const values = (parse(text) ?? {}) as Values;
      return m
        ? { name, values, expect: { instancePath: m[1] ?? '', keyword: m[2] ?? '' } }
        : { name, values };
    });
}

/** Follows a local `$ref` (`#/definitions/x`), also inside `items`. */
function deref(root: JsonSchema, node: JsonSchema): JsonSchema {
  let out = node;
  while (typeof out.$ref === 'string') {
    out = out.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<JsonSchema>((n, key) => n[key] as JsonSchema, root);
  }
  if (typeof out.items === 'object' && out.items !== null)
    out = { ...out, items: deref(root, out.items as JsonSchema) };
  return out;
}

/** The schema node at a dotted values path (following properties only, `$ref`s resolved). */
export function schemaAt(schema: JsonSchema, path: string): JsonSchema | undefined {
  let node: JsonSchema | undefined = schema;
  for (const part of path.split('.')) {
    const props = node?.properties as Record<string, JsonSchema> | undefined;
    node = props?.[part];
    if (node !== undefined) node = deref(schema, node);
  }
  return node;
}

/** Every dotted path to a leaf (a node without `properties`) under `prefix`. */
export function schemaLeaves(schema: JsonSchema, prefix = ''): string[] {
  const props = schema.properties as Record<string, JsonSchema> | undefined;
  if (props === undefined) return [prefix];
  return Object.entries(props).flatMap(([key, node]) =>
    schemaLeaves(node, prefix ? `${prefix}.${key}` : key),
  );
}
