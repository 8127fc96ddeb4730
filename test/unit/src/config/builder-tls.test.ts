// Startup refusals of the builder endpoints and TLS options (docs/fleet.md): each names its option,
// none quotes a file's content, and a consistent set loads with only paths in the configuration.
import test from 'ava';
import { builderEndpoints } from '../../../../src/config/builder-endpoints.js';
import { loadConfig } from '../../../../src/config/load.js';
import { effectiveConfigView } from '../../../../src/config/view.js';
import { configScratch } from '../../../helpers/config-scratch.js';
import { selfSignedCert } from '../../../helpers/fake-registry.js';

const { baseEnv, file, problemsOf } = configScratch('ibs-builder-tls-');
const pem = selfSignedCert();
const other = selfSignedCert();
const CANARY = 'CANARY-KEY-TEXT-4711';
const ca = file('.pem', pem.cert);
const cert = file('.pem', pem.cert);
const key = file('.pem', pem.key);
const otherKey = file('.pem', other.key);
const notPemKey = file('.pem', `not a key ${CANARY}\n`);
const brokenKey = file('.pem', `-----BEGIN PRIVATE KEY-----\n${CANARY}\n-----END PRIVATE KEY-----\n`);
const TCP = ['--builder-endpoint', 'tcp://127.0.0.1:1234'];

const CASES: readonly { title: string; argv: string[]; env?: Record<string, string>; problem: RegExp }[] = [
  {
    title: 'CA unreadable',
    argv: [...TCP, '--builder-tls-ca', '/nonexistent/ca.pem'],
    problem: /^--builder-tls-ca .*cannot be read \(ENOENT\)/,
  },
  {
    title: 'CA not PEM',
    argv: [...TCP, '--builder-tls-ca', notPemKey],
    problem: /^--builder-tls-ca .*is not a PEM certificate/,
  },
  {
    title: 'key not PEM',
    argv: [...TCP, '--builder-tls-cert', cert, '--builder-tls-key', notPemKey],
    problem: /^--builder-tls-key .*is not a PEM private key$/,
  },
  {
    title: 'key PEM that does not parse',
    argv: [...TCP, '--builder-tls-cert', cert, '--builder-tls-key', brokenKey],
    problem: /^--builder-tls-key .*does not parse/,
  },
  {
    title: 'cert without key',
    argv: [...TCP, '--builder-tls-cert', cert],
    problem: /^--builder-tls-cert .*without --builder-tls-key/,
  },
  {
    title: 'key without cert (env)',
    argv: TCP,
    env: { BUILDER_TLS_KEY_PATH: key },
    problem: /^--builder-tls-key \(BUILDER_TLS_KEY_PATH\) is given without --builder-tls-cert/,
  },
  {
    title: 'key of another certificate',
    argv: [...TCP, '--builder-tls-cert', cert, '--builder-tls-key', otherKey],
    problem: /^--builder-tls-key .*is not the key of the --builder-tls-cert certificate/,
  },
  {
    title: 'TLS files for a unix socket',
    argv: ['--builder-endpoint', 'unix:///run/buildkit/buildkitd.sock', '--builder-tls-ca', ca],
    problem: /^--builder-tls-\* files are given for the unix socket endpoint unix:\/\/\/run/,
  },
  {
    title: 'server name without TLS files',
    argv: [...TCP, '--builder-tls-server-name', 'bk.example'],
    problem: /^--builder-tls-server-name .*without TLS files/,
  },
  {
    title: 'an endpoint twice',
    argv: ['--builder-endpoint', 'tcp://a:1,tcp://b:2,tcp://a:1'],
    problem: /"tcp:\/\/a:1" is listed twice/,
  },
  {
    title: 'an endpoint with credentials',
    argv: ['--builder-endpoint', 'tcp://u:p@a:1'],
    problem: /must not hold credentials/,
  },
  {
    title: 'an endpoint that is no URL (settings list)',
    argv: ['--settings', file('.yaml', 'builder:\n  endpoint: [tcp://a:1, a:2]\n')],
    problem: /builder\.endpoint\[1\]: must be a URL/,
  },
];

for (const c of CASES) {
  test(`startup refusal: ${c.title}`, (t) => {
    const problems = problemsOf(c.argv, c.env);
    t.is(problems.length, 1, problems.join('\n'));
    t.regex(problems[0] ?? '', c.problem);
    t.false(problems.join('\n').includes(CANARY), 'no file content in a problem');
  });
}

test('endpoints: a comma-separated list, a settings string or a settings list, in order', (t) => {
  const flag = loadConfig({ argv: ['--builder-endpoint', ' tcp://a:1 ,tcp://b:2,'], env: baseEnv });
  t.deepEqual(builderEndpoints(flag), ['tcp://a:1', 'tcp://b:2']);
  const text = file('.yaml', 'builder:\n  endpoint: tcp://a:1,tcp://b:2\n');
  t.deepEqual(builderEndpoints(loadConfig({ argv: ['--settings', text], env: baseEnv })), [
    'tcp://a:1',
    'tcp://b:2',
  ]);
  const single = file('.json', JSON.stringify({ builder: { endpoint: 'tcp://a:1' } }));
  t.deepEqual(builderEndpoints(loadConfig({ argv: ['--settings', single], env: baseEnv })), ['tcp://a:1']);
  const list = file('.yaml', 'builder:\n  endpoint:\n    - tcp://b:2\n    - tcp://a:1\n');
  t.deepEqual(builderEndpoints(loadConfig({ argv: ['--settings', list], env: baseEnv })), [
    'tcp://b:2',
    'tcp://a:1',
  ]);
});

test('a consistent TLS set loads as paths; the view shows which parts are set, never a file', (t) => {
  const settings = file(
    '.yaml',
    `builder:\n  tls:\n    ca: ${ca}\n    cert: ${cert}\n    key: ${key}\n    serverName: bk.example\n`,
  );
  const config = loadConfig({ argv: [...TCP, '--settings', settings], env: baseEnv });
  t.deepEqual(config.builderTls, { caPath: ca, certPath: cert, keyPath: key, serverName: 'bk.example' });
  const view = effectiveConfigView(config);
  t.deepEqual(view.builderTls, { ca: true, clientCertificate: true, serverName: 'bk.example' });
  const text = JSON.stringify(view);
  t.false(text.includes('PRIVATE KEY'));
  t.false(text.includes(key));
  const plain = effectiveConfigView(loadConfig({ argv: TCP, env: baseEnv }));
  t.deepEqual(plain.builderTls, { ca: false, clientCertificate: false });
});
