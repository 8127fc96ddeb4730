// The signing key is checked at startup: only a PEM ECDSA P-256 key in PKCS#8 (plain, or encrypted
// with SIGNING_KEY_PASSWORD) starts the service; every refusal names the option, never the key.
import test from 'ava';
import { createHash, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../../../src/config/config-error.js';
import { loadConfig } from '../../../../src/config/load.js';

const dir = mkdtempSync(join(tmpdir(), 'ibs-signing-key-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));
const baseEnv = { DOCKER_CONFIG: join(dir, 'no-docker'), HOME: dir };
let n = 0;
const file = (content: string | Buffer): string => {
  const path = join(dir, `key-${n++}.pem`);
  writeFileSync(path, content);
  return path;
};

const ec = (namedCurve: string) => generateKeyPairSync('ec', { namedCurve });
const p256 = ec('P-256');
const pkcs8 = p256.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const PASSWORD = 'canary-password-7f3a';
const encrypted = p256.privateKey
  .export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: PASSWORD })
  .toString();

function problemsOf(path: string, env: Record<string, string> = {}): string {
  const error = configErrorOf(() =>
    loadConfig({ argv: ['--signing-key', path], env: { ...baseEnv, ...env } }),
  );
  return error.problems.join('\n');
}

function configErrorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('no ConfigError');
}

test('a P-256 PKCS#8 key loads; /config material is its public fingerprint', (t) => {
  const config = loadConfig({ argv: ['--signing-key', file(pkcs8)], env: baseEnv });
  const der = createPublicKey(p256.privateKey).export({ type: 'spki', format: 'der' });
  t.is(config.signing?.fingerprint, `sha256:${createHash('sha256').update(der).digest('hex')}`);
  t.regex(config.signing?.publicKeyPem ?? '', /^-----BEGIN PUBLIC KEY-----/);
});

test('an encrypted key loads with SIGNING_KEY_PASSWORD from the environment', (t) => {
  const config = loadConfig({
    argv: [],
    env: { ...baseEnv, SIGNING_KEY_PATH: file(encrypted), SIGNING_KEY_PASSWORD: PASSWORD },
  });
  t.truthy(config.signing);
});

const refusals: Array<[string, () => string, RegExp]> = [
  ['an unreadable file', () => problemsOf(join(dir, 'missing.pem')), /--signing-key: cannot read .*ENOENT/],
  ['a file that is not PEM', () => problemsOf(file('not a key\n')), /--signing-key: .* PKCS#8/],
  [
    'an RSA key',
    () =>
      problemsOf(
        file(
          generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
            type: 'pkcs8',
            format: 'pem',
          }),
        ),
      ),
    /--signing-key: .*ECDSA P-256/,
  ],
  [
    'a P-384 key',
    () => problemsOf(file(ec('P-384').privateKey.export({ type: 'pkcs8', format: 'pem' }))),
    /--signing-key: .*ECDSA P-256/,
  ],
  [
    'a SEC1 (BEGIN EC PRIVATE KEY) key',
    () => problemsOf(file(p256.privateKey.export({ type: 'sec1', format: 'pem' }))),
    /--signing-key: .*PKCS#8/,
  ],
  ['an encrypted key without its password', () => problemsOf(file(encrypted)), /SIGNING_KEY_PASSWORD/],
  [
    'an encrypted key with a wrong password',
    () => problemsOf(file(encrypted), { SIGNING_KEY_PASSWORD: 'wrong' }),
    /could not be decrypted with SIGNING_KEY_PASSWORD/,
  ],
];

for (const [what, problems, expected] of refusals) {
  test(`startup is refused for ${what}, naming the option and never the key`, (t) => {
    const text = problems();
    t.regex(text, expected);
    t.false(text.includes('PRIVATE KEY-----\n'), 'no key material');
    t.false(text.includes(PASSWORD));
  });
}

test('the option named is the one that gave the path (env)', (t) => {
  const error = configErrorOf(() =>
    loadConfig({ argv: [], env: { ...baseEnv, SIGNING_KEY_PATH: join(dir, 'missing.pem') } }),
  );
  t.regex(error.problems.join('\n'), /^SIGNING_KEY_PATH: cannot read/m);
});
