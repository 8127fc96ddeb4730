import test from 'ava';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServiceError } from '../../../../src/errors/errors.js';
import { secretsIdentity } from '../../../../workers/builder/secret-identity.js';
import { KEY_FILE, scratchIdentityKey } from '../../../../workers/builder/secret-identity-key.js';

const key = Buffer.alloc(32, 7);
const npmrc = { id: 'npmrc', value: 'token-1' };

test('the identity depends on each id and value and on the key, not on the order', (t) => {
  const base = secretsIdentity(key, [npmrc, { id: 'pip', value: 'p' }]);
  t.regex(base ?? '', /^[0-9a-f]{64}$/);
  t.is(secretsIdentity(key, [{ id: 'pip', value: 'p' }, npmrc]), base);
  t.not(
    secretsIdentity(key, [
      { id: 'npmrc', value: 'token-2' },
      { id: 'pip', value: 'p' },
    ]),
    base,
  );
  t.not(
    secretsIdentity(key, [
      { id: 'npmrc2', value: 'token-1' },
      { id: 'pip', value: 'p' },
    ]),
    base,
  );
  t.not(secretsIdentity(Buffer.alloc(32, 8), [npmrc, { id: 'pip', value: 'p' }]), base);
  // No ambiguity between an id and a value.
  t.not(secretsIdentity(key, [{ id: 'a', value: 'b,c' }]), secretsIdentity(key, [{ id: 'a,b', value: 'c' }]));
  t.is(secretsIdentity(key, []), undefined);
});

test('the identity is not the unkeyed hash of the value', (t) => {
  const plain = createHash('sha256').update(npmrc.value).digest('hex');
  t.not(secretsIdentity(key, [npmrc]), plain);
});

test('the scratch key is made once (0600), kept across processes, and a bad file is refused', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'identity-key-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const first = await scratchIdentityKey(dir)();
  t.is(first.length, 32);
  t.is((await stat(join(dir, KEY_FILE))).mode & 0o777, 0o600);
  t.deepEqual(await scratchIdentityKey(dir)(), first, 'another process reads the same key');
  t.is((await readFile(join(dir, KEY_FILE), 'utf8')).length, 64);
  const other = await mkdtemp(join(tmpdir(), 'identity-key-'));
  t.teardown(() => rm(other, { recursive: true, force: true }));
  t.notDeepEqual(await scratchIdentityKey(other)(), first);
  const bad = await mkdtemp(join(tmpdir(), 'identity-key-'));
  t.teardown(() => rm(bad, { recursive: true, force: true }));
  await writeFile(join(bad, KEY_FILE), 'not a key');
  const refused = await t.throwsAsync(scratchIdentityKey(bad)(), { instanceOf: ServiceError });
  t.is(refused?.code, 'SECRETS_IDENTITY_KEY_INVALID');
  t.false(refused?.message.includes('not a key'), 'the stored text is never shown');
});
