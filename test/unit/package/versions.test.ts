// One version for the service: the API document and the chart's appVersion (the image tag it
// deploys by default) state package.json's version.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const read = (path: string): string => readFileSync(`${ROOT}/${path}`, 'utf8');
const packageVersion = (JSON.parse(read('package.json')) as { version: string }).version;

test("docs/openapi.yaml's info.version is package.json's version", (t) => {
  t.regex(packageVersion, /^\d+\.\d+\.\d+$/);
  const api = parse(read('docs/openapi.yaml')) as { info: { version: unknown } };
  t.is(api.info.version, packageVersion);
});

test("the chart's appVersion is package.json's version", (t) => {
  const chart = parse(read('k8s/image-build-service/Chart.yaml')) as { appVersion: unknown };
  t.is(chart.appVersion, packageVersion);
});
