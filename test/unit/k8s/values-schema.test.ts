// values.schema.json (draft-07, as Helm validates it) against values.yaml and the fixture files
// under values/valid and values/invalid, each merged over values.yaml the way Helm merges them.
import test from 'ava';
import {
  defaultValues,
  mergeValues,
  validateValues,
  valuesFiles,
  valuesSchema,
  type JsonSchema,
} from '../../helpers/chart/chart.js';

test('values.yaml satisfies its own schema', (t) => {
  t.deepEqual(validateValues(defaultValues()), []);
});

test('the defaults are the deployment defaults of the contract', (t) => {
  const v = defaultValues() as Record<string, Record<string, unknown>>;
  t.is(v.replicas as unknown, 1);
  t.deepEqual(v.resources, {
    requests: { cpu: '250m', memory: '256Mi' },
    limits: { cpu: '1', memory: '1Gi' },
  });
  t.is(v.terminationGracePeriodSeconds as unknown, 300);
  t.deepEqual(v.scratch, { sizeLimit: '5Gi' });
  t.deepEqual(v.builderState, { sizeLimit: '64Mi' });
  t.is(v.build?.fallbackImage, 'mcr.microsoft.com/devcontainers/base:ubuntu');
  t.is(v.serviceName as unknown, 'service-builder');
  t.is(v.environment as unknown, '');
  t.false((v.metrics?.serviceMonitor as { enabled: boolean }).enabled);
  t.false((v.metrics?.prometheusRule as { enabled: boolean }).enabled);
  t.false((v.metrics?.grafanaDashboard as { enabled: boolean }).enabled);
});

// The settings file each one renders is loaded by the service in rendered.test.ts.
for (const file of valuesFiles('valid')) {
  test(`valid: ${file.name} is accepted`, (t) => {
    t.deepEqual(validateValues(mergeValues(defaultValues(), file.values)), []);
  });
}

const invalid = valuesFiles('invalid');
test('there is an invalid values file for each kind of rejection', (t) => {
  t.true(invalid.length >= 20);
  for (const file of invalid) t.truthy(file.expect, `${file.name} lacks its "# expect:" line`);
});

for (const file of invalid) {
  test(`invalid: ${file.name} is rejected at ${file.expect?.instancePath || '/'} (${file.expect?.keyword})`, (t) => {
    const errors = validateValues(mergeValues(defaultValues(), file.values));
    t.true(
      errors.some((e) => e.instancePath === file.expect?.instancePath && e.keyword === file.expect.keyword),
      JSON.stringify(errors.map((e) => [e.instancePath, e.keyword, e.message])),
    );
  });
}

const CONDITIONS = new Set(['if', 'then', 'else', 'not']);

/** Every object node of the schema: closed (additionalProperties false) or a typed map. */
function objectNodes(node: unknown, path: string, out: [string, JsonSchema][]): void {
  if (typeof node !== 'object' || node === null) return;
  if (Array.isArray(node)) {
    node.forEach((n, i) => objectNodes(n, `${path}[${i}]`, out));
    return;
  }
  const schema = node as JsonSchema;
  if (schema.type === 'object') out.push([path, schema]);
  // A condition (`if`, `then`, `else`, `not`) constrains values the closed shape already admits.
  for (const [key, child] of Object.entries(schema)) {
    if (!CONDITIONS.has(key)) objectNodes(child, `${path}/${key}`, out);
  }
}

test('the schema is strict: every object is closed or a map with a typed value schema', (t) => {
  const nodes: [string, JsonSchema][] = [];
  objectNodes(valuesSchema(), '', nodes);
  t.true(nodes.length > 20);
  for (const [path, schema] of nodes) {
    const extra = schema.additionalProperties;
    t.true(extra === false || (typeof extra === 'object' && extra !== null), `${path} is open`);
  }
});

test('every timeout and count the service requires >= 1 is >= 1 in the schema too', (t) => {
  const props = valuesSchema().properties as Record<string, JsonSchema>;
  const build = (props.build as { properties: Record<string, JsonSchema> }).properties;
  for (const key of ['cloneTimeoutSeconds', 'timeoutSeconds']) t.is(build[key]?.minimum, 1, key);
  t.is((props.logs as { properties: Record<string, JsonSchema> }).properties.retention?.minimum, 1);
  t.is(
    (props.service as { properties: Record<string, JsonSchema> }).properties.shutdownGraceSeconds?.minimum,
    1,
  );
  t.is(props.replicas?.minimum, 0);
});

test('replicas above 1 only with Redis configured (by URL or by an existing Secret)', (t) => {
  const conditions = valuesSchema().allOf as {
    if?: JsonSchema;
    then?: { properties: Record<string, JsonSchema> };
  }[];
  const redis = conditions.find((c) => c.then?.properties.replicas !== undefined);
  t.deepEqual(redis?.then?.properties.replicas?.enum, [0, 1]);
  t.deepEqual(redis?.if, {
    type: 'object',
    properties: {
      redis: {
        type: 'object',
        properties: {
          url: { type: 'string', const: '' },
          existingSecret: { type: 'string', const: '' },
          clusterNodes: { type: 'array', maxItems: 0 },
          sentinels: { type: 'array', maxItems: 0 },
        },
      },
    },
  });
});
