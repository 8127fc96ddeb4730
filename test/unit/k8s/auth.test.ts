// Caller identity and network reach as the real Helm renders them: auth.mode, issuers and rules in
// the settings file, static token hashes in a Secret (the chart's or the team's) mounted as the file
// AUTH_TOKENS_PATH names, an issuer's private CA for Node, the schema's refusals (an Ingress that
// would answer anyone, malformed identities) with Helm's own message, the service's NetworkPolicy,
// and the install notes that say who can reach the service.
import { createHash } from 'node:crypto';
import test from 'ava';
import { parse } from 'yaml';
import { AUTH_ISSUER_SCHEMA, AUTH_RULE_SCHEMA, AUTH_TOKEN_SCHEMA } from '../../../src/config/auth.js';
import { CHART_DIR, valuesSchema } from '../../helpers/chart/chart.js';
import {
  helm,
  render,
  template,
  valuesPath,
  NAMESPACE,
  RELEASE,
  type K8sObject,
  type Rendered,
} from '../../helpers/chart/helm.js';
import { container, deploymentSpec } from '../../helpers/chart/pod.js';

type Json = Record<string, unknown>;
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

const ISSUERS = [
  { name: 'github', issuer: 'https://token.actions.githubusercontent.com', audience: 'image-build-service' },
];
const TOKENS = [{ name: 'platform-ops', sha256: sha256('a static token') }];
const RULES = [
  {
    name: 'each-repository-builds-itself',
    issuer: 'github',
    claims: { repository_owner: 'example' },
    actions: ['build', 'read', 'cancel'],
    repositories: [{ host: 'github.com', path: '{repository}' }],
    images: [{ registry: 'ghcr.io', name: 'example/{repository_name}' }],
  },
  {
    name: 'ops',
    token: 'platform-ops',
    actions: ['build', 'read', 'cancel', 'delete', 'admin'],
    repositories: [{ host: '*', path: '**' }],
    images: [{ registry: '*', name: '**' }],
  },
];
const ENFORCE = { auth: { mode: 'enforce', issuers: ISSUERS, tokens: TOKENS, rules: RULES } };
const INGRESS = { enabled: true, hosts: [{ host: 'builds.example.com' }] };

const settingsOf = (r: Rendered): Record<string, unknown> => {
  const map = r.find('ConfigMap', '-settings');
  return parse((map?.data as Record<string, string>)['settings.yaml'] ?? '') as Record<string, unknown>;
};
const envValue = (r: Rendered, name: string): string | undefined =>
  container(r).env.find((e) => e.name === name)?.value;
interface Volume {
  name: string;
  secret?: { secretName: string; defaultMode?: number; items?: { key: string; path: string }[] };
  configMap?: { name: string; items?: { key: string; path: string }[] };
}
const volume = (r: Rendered, name: string): Volume | undefined =>
  (deploymentSpec(r).template.spec.volumes as Volume[]).find((v) => v.name === name);
const mountPath = (r: Rendered, name: string): string | undefined =>
  container(r).volumeMounts.find((m) => m.name === name)?.mountPath;

test('by default: no auth section, no token Secret, no token file or CA variable', async (t) => {
  const r = await render();
  t.false('auth' in settingsOf(r));
  t.is(r.find('Secret', '-auth-tokens'), undefined);
  t.is(envValue(r, 'AUTH_TOKENS_PATH'), undefined);
  t.is(envValue(r, 'NODE_EXTRA_CA_CERTS'), undefined);
  t.is(volume(r, 'auth-tokens'), undefined);
});

test('enforce: mode, issuers and rules go into the settings file; token hashes do not', async (t) => {
  const r = await render([], ENFORCE);
  t.deepEqual(settingsOf(r).auth, { mode: 'enforce', issuers: ISSUERS, rules: RULES });
  t.false(JSON.stringify(r.find('ConfigMap', '-settings')).includes(TOKENS[0]?.sha256 ?? '?'));
});

test("the token hashes from values: the chart's Secret, mounted read-only as the file AUTH_TOKENS_PATH names", async (t) => {
  const r = await render([], ENFORCE);
  const secret = r.find('Secret', '-auth-tokens') as K8sObject;
  t.is(secret.metadata.name, `${RELEASE}-image-build-service-auth-tokens`);
  const file = Buffer.from((secret.data as Record<string, string>)['tokens.yaml'] ?? '', 'base64').toString();
  t.deepEqual(parse(file), TOKENS);
  t.deepEqual(volume(r, 'auth-tokens')?.secret, {
    secretName: secret.metadata.name,
    defaultMode: 0o440,
    items: [{ key: 'tokens.yaml', path: 'tokens.yaml' }],
  });
  const mount = container(r).volumeMounts.find((m) => m.name === 'auth-tokens');
  t.true(mount?.readOnly);
  t.is(envValue(r, 'AUTH_TOKENS_PATH'), `${mount?.mountPath ?? '?'}/tokens.yaml`);
  // A new token hash rolls the pod.
  const annotations = deploymentSpec(r).template.metadata.annotations;
  const other = await render([], {
    ...ENFORCE,
    auth: { ...ENFORCE.auth, tokens: [{ name: 'platform-ops', sha256: sha256('another token') }] },
  });
  t.not(
    deploymentSpec(other).template.metadata.annotations['checksum/auth-tokens'],
    annotations['checksum/auth-tokens'],
  );
});

test("the token hashes from the team's Secret: no Secret of the chart, the team's mounted in its place", async (t) => {
  const r = await render([], { auth: { mode: 'enforce', existingSecret: 'ibs-tokens', rules: [] } });
  t.is(r.find('Secret', '-auth-tokens'), undefined);
  t.is(volume(r, 'auth-tokens')?.secret?.secretName, 'ibs-tokens');
  t.deepEqual(volume(r, 'auth-tokens')?.secret?.items, [{ key: 'tokens.yaml', path: 'tokens.yaml' }]);
  t.is(envValue(r, 'AUTH_TOKENS_PATH'), `${mountPath(r, 'auth-tokens') ?? '?'}/tokens.yaml`);
});

test("an issuer's private CA: the ConfigMap's ca.crt is mounted and NODE_EXTRA_CA_CERTS names it", async (t) => {
  const r = await render([], { ...ENFORCE, auth: { ...ENFORCE.auth, issuerCa: 'corp-ca' } });
  t.deepEqual(volume(r, 'issuer-ca')?.configMap, {
    name: 'corp-ca',
    items: [{ key: 'ca.crt', path: 'ca.crt' }],
  });
  t.true(container(r).volumeMounts.find((m) => m.name === 'issuer-ca')?.readOnly);
  t.is(envValue(r, 'NODE_EXTRA_CA_CERTS'), `${mountPath(r, 'issuer-ca') ?? '?'}/ca.crt`);
});

test("people's sign-in: auth.browser in the settings file, the client secret from the team's Secret as a file", async (t) => {
  const browser = {
    issuer: 'github',
    clientId: 'ibs-pages',
    scopes: ['openid', 'email', 'groups'],
    redirectUrl: 'https://builds.example.com/auth/callback',
    sessionHours: 4,
  };
  const off = await render([], ENFORCE);
  t.false('browser' in (settingsOf(off).auth as Json));
  t.is(envValue(off, 'AUTH_BROWSER_CLIENT_SECRET_FILE'), undefined);
  const r = await render([], {
    auth: {
      ...ENFORCE.auth,
      browser: { ...browser, existingSecret: 'ibs-pages', existingSecretKey: 'secret' },
    },
  });
  t.deepEqual((settingsOf(r).auth as Json).browser, browser);
  t.deepEqual(volume(r, 'browser-client')?.secret, {
    secretName: 'ibs-pages',
    defaultMode: 0o440,
    items: [{ key: 'secret', path: 'client-secret' }],
  });
  t.true(container(r).volumeMounts.find((m) => m.name === 'browser-client')?.readOnly);
  t.is(
    envValue(r, 'AUTH_BROWSER_CLIENT_SECRET_FILE'),
    `${mountPath(r, 'browser-client') ?? '?'}/client-secret`,
  );
  t.false(
    JSON.stringify(r.objects).includes('AUTH_BROWSER_CLIENT_SECRET"'),
    'never the secret in an env value',
  );
});

/** helm template's refusal: exit code non-zero, and its stderr. */
async function refusal(set: Record<string, unknown>): Promise<string> {
  const result = await template([], set);
  if (result.exitCode === 0) throw new Error('helm template accepted the values');
  return result.stderr;
}

test('an Ingress with auth off is refused unless ingress.allowAnonymous is set on purpose', async (t) => {
  t.regex(await refusal({ ingress: INGRESS }), /at '\/ingress\/allowAnonymous': value must be true/);
  await t.notThrowsAsync(render([], { ingress: { ...INGRESS, allowAnonymous: true } }));
  const withAuth = await render([], { ingress: INGRESS, ...ENFORCE });
  t.truthy(withAuth.find('Ingress'));
});

test('malformed identities are refused before anything renders, each named by its path', async (t) => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [
      { auth: { tokens: [{ name: 'ops', sha256: 'A'.repeat(64) }] } },
      /at '\/auth\/tokens\/0\/sha256': '[A]{64}' does not match pattern '\^\[0-9a-f\]\{64\}\$'/,
    ],
    [
      { auth: { tokens: [{ name: 'ops', sha256: 'abc' }] } },
      /at '\/auth\/tokens\/0\/sha256': 'abc' does not match pattern/,
    ],
    [
      { auth: { issuers: [{ ...ISSUERS[0], issuer: 'http://issuer.example.com' }] } },
      /at '\/auth\/issuers\/0\/issuer': 'http:\/\/issuer\.example\.com' does not match pattern '\^https:\/\//,
    ],
    [
      { auth: { tokens: TOKENS, rules: [{ name: 'r', token: 'platform-ops', actions: ['push'] }] } },
      /at '\/auth\/rules\/0\/actions\/0': value must be one of 'build', 'read', 'cancel', 'delete', 'admin'/,
    ],
    [
      { auth: { rules: [{ name: 'r', token: 'platform-ops', actions: ['read'], verbs: ['x'] }] } },
      /at '\/auth\/rules\/0': additional properties 'verbs' not allowed/,
    ],
    [
      { auth: { rules: [{ name: 'r', token: 'a', issuer: 'b', actions: ['read'] }] } },
      /at '\/auth\/rules\/0': 'oneOf' failed/,
    ],
    [{ auth: { mode: 'enforce' } }, /at '\/auth\/issuers': minItems: got 0, want 1/],
    [{ auth: { mode: 'audit' } }, /at '\/auth\/mode': value must be one of 'off', 'enforce'/],
    [
      { auth: { tokens: TOKENS, existingSecret: 'ibs-tokens' } },
      /at '\/auth\/tokens': maxItems: got 1, want 0/,
    ],
  ];
  for (const [set, message] of cases) t.regex(await refusal(set), message, JSON.stringify(set));
});

interface PolicySpec {
  podSelector: { matchLabels: Record<string, string> };
  policyTypes: string[];
  ingress: {
    from: {
      namespaceSelector?: { matchLabels: Record<string, string> };
      podSelector?: { matchLabels?: Record<string, string> };
    }[];
    ports: { port: number; protocol: string }[];
  }[];
}
const servicePolicy = (r: Rendered): PolicySpec | undefined =>
  r.objects.find((o) => o.kind === 'NetworkPolicy' && o.metadata.name === `${RELEASE}-image-build-service`)
    ?.spec as PolicySpec | undefined;
const namespace = (name: string) => ({
  namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': name } },
});

test("by default a NetworkPolicy admits the ingress controller, Prometheus and the release's namespace to the service port only", async (t) => {
  const r = await render();
  const policy = servicePolicy(r);
  if (policy === undefined) return t.fail('no NetworkPolicy for the service');
  const pod = deploymentSpec(r).template.metadata.labels;
  t.deepEqual(policy.podSelector.matchLabels, deploymentSpec(r).selector.matchLabels);
  t.like(pod, policy.podSelector.matchLabels);
  t.deepEqual(policy.policyTypes, ['Ingress']);
  t.deepEqual(policy.ingress, [
    {
      from: [namespace('ingress-nginx'), namespace('monitoring'), { podSelector: {} }],
      ports: [{ port: container(r).ports[0]?.containerPort ?? -1, protocol: 'TCP' }],
    },
  ]);
});

test('the NetworkPolicy follows its values: other namespaces, none, the service port, or off', async (t) => {
  const custom = await render([], {
    networkPolicy: { ingressNamespace: 'traefik', prometheusNamespace: '' },
    service: { port: 9090 },
  });
  t.deepEqual(servicePolicy(custom)?.ingress, [
    { from: [namespace('traefik'), { podSelector: {} }], ports: [{ port: 9090, protocol: 'TCP' }] },
  ]);
  const off = await render([], { networkPolicy: { enabled: false } });
  t.is(servicePolicy(off), undefined);
  // The builders' own policy stays.
  t.truthy(off.find('NetworkPolicy', '-buildkit'));
});

async function notes(files: string[], set: Record<string, unknown>): Promise<string> {
  const result = await helm([
    'install',
    RELEASE,
    CHART_DIR,
    '--namespace',
    NAMESPACE,
    '--dry-run=client',
    ...files.flatMap((f) => ['--values', f]),
    ...Object.entries(set).flatMap(([k, v]) => ['--set-json', `${k}=${JSON.stringify(v)}`]),
  ]);
  if (result.exitCode !== 0) throw new Error(result.stderr);
  return result.stdout.slice(result.stdout.indexOf('NOTES:'));
}

test('the notes warn when the Ingress exposes the service with no identities, and point to docs/auth.md', async (t) => {
  const text = await notes([valuesPath('valid', 'ingress.yaml')], {});
  t.regex(
    text,
    /WARNING: the service is reachable from outside the cluster through the Ingress with no caller\s+identities/,
  );
  t.regex(text, /docs\/auth\.md/);
});

test('the notes say who reaches the service without identities, and that identities are enforced when they are', async (t) => {
  const off = await notes([], {});
  t.regex(off, /Caller identity: off/);
  t.regex(
    off,
    /lets in the namespaces\s+ingress-nginx \(ingress controller\), monitoring \(Prometheus\), builds \(this release\) only/,
  );
  t.regex(off, /docs\/auth\.md/);
  t.notRegex(off, /WARNING: the service is reachable/);
  const open = await notes([], { 'networkPolicy.enabled': false });
  t.regex(open, /networkPolicy\.enabled is false: any pod of the cluster may/);
  const enforced = await notes([], { ...ENFORCE, ingress: INGRESS });
  t.regex(enforced, /Caller identity: enforced \(1 issuer\(s\), 1 static token\(s\), 2 rule\(s\)\)/);
  t.notRegex(enforced, /WARNING: the service is reachable/);
});

test("the schema's names and globs are the service's own patterns, its token digests stricter (lower case)", (t) => {
  const definitions = valuesSchema().definitions as Record<string, { properties: Record<string, Json> }>;
  const chart = (name: string): Record<string, Json> => definitions[name]?.properties ?? {};
  const rule = chart('authRule');
  t.is(chart('authIssuer').name?.pattern, AUTH_ISSUER_SCHEMA.properties.name.pattern);
  t.is(chart('authToken').name?.pattern, AUTH_TOKEN_SCHEMA.properties.name.pattern);
  for (const key of ['name', 'issuer', 'token'] as const)
    t.is(rule[key]?.pattern, AUTH_RULE_SCHEMA.properties[key].pattern, key);
  t.deepEqual(
    (rule.claims?.propertyNames as Json | undefined)?.pattern,
    AUTH_RULE_SCHEMA.properties.claims.propertyNames.pattern,
  );
  const items = (key: 'repositories' | 'images'): Record<string, Json> =>
    ((rule[key]?.items as Json | undefined)?.properties ?? {}) as Record<string, Json>;
  for (const [key, fields] of [
    ['repositories', ['host', 'path']],
    ['images', ['registry', 'name']],
  ] as const) {
    const service = AUTH_RULE_SCHEMA.properties[key].items.properties as Record<string, { pattern: string }>;
    for (const field of fields) t.is(items(key)[field]?.pattern, service[field]?.pattern, `${key}.${field}`);
  }
  t.deepEqual(Object.keys(rule).sort(), Object.keys(AUTH_RULE_SCHEMA.properties).sort());
  t.is(chart('authToken').sha256?.pattern, '^[0-9a-f]{64}$');
  t.is(AUTH_TOKEN_SCHEMA.properties.sha256.pattern, '^[0-9a-fA-F]{64}$');
});
