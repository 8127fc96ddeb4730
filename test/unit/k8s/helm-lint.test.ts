// The real Helm lints the chart strictly with the default values and every valid values file, and
// refuses every invalid values file through values.schema.json, naming the value at fault (the same
// files test/unit/k8s/values-schema.test.ts checks with ajv).
import test from 'ava';
import { valuesFiles } from '../../helpers/chart/chart.js';
import { helm, lint, template, valuesPath } from '../../helpers/chart/helm.js';

test('the pinned Helm is the one the chart is tested with', async (t) => {
  const { exitCode, stdout } = await helm(['version', '--short']);
  t.is(exitCode, 0);
  t.regex(stdout, /^v4\.1\.4\+/);
});

test('helm lint --strict passes with the default values', async (t) => {
  const result = await lint();
  t.is(result.exitCode, 0, result.stdout + result.stderr);
  t.regex(result.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
});

for (const file of valuesFiles('valid')) {
  test(`valid: helm lint --strict and helm template pass with ${file.name}`, async (t) => {
    const path = valuesPath('valid', file.name);
    const linted = await lint([path]);
    t.is(linted.exitCode, 0, linted.stdout + linted.stderr);
    const rendered = await template([path]);
    t.is(rendered.exitCode, 0, rendered.stderr);
  });
}

/** helm template's schema failure names the instance path: `- at '/build/mode': ...`. */
const templateRefusal = (stderr: string, instancePath: string): boolean =>
  stderr.includes("values don't meet the specifications of the schema") &&
  stderr.includes(`- at '${instancePath}'`);

/**
 * helm lint reports the schema failure against values.yaml: `[ERROR] values.yaml: - at '/build/mode': ...`,
 * or below the condition that failed (`[ERROR] values.yaml: - at '': 'allOf' failed` then `  - at '/replicas': ...`).
 */
const lintRefusal = (stdout: string, instancePath: string): boolean => {
  const block = /\[ERROR\] values\.yaml: (.*(?:\n {2,}- at .*)*)/.exec(stdout)?.[1] ?? '';
  return block.startsWith(`- at '${instancePath}'`) || block.includes(`\n  - at '${instancePath}'`);
};

for (const file of valuesFiles('invalid')) {
  const where = file.expect?.instancePath ?? '';
  test(`invalid: helm lint and helm template refuse ${file.name} at '${where}' through the schema`, async (t) => {
    const path = valuesPath('invalid', file.name);
    const linted = await lint([path]);
    t.not(linted.exitCode, 0);
    t.true(lintRefusal(linted.stdout, where), linted.stdout);
    const rendered = await template([path]);
    t.not(rendered.exitCode, 0);
    t.is(rendered.stdout, '');
    t.true(templateRefusal(rendered.stderr, where), rendered.stderr);
  });
}
