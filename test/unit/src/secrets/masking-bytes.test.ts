// Masking on bytes (captured output is never decoded on its way to a log) against the one rule
// stated on text (maskSecrets), and the line masker that applies it to a stream of chunks.
import test from 'ava';
import { createLineMasker } from '../../../../src/secrets/line-masker.js';
import { byteVariants, maskBytes, maskSecrets, secretVariants } from '../../../../src/secrets/masking.js';

const KEY = [
  '-----BEGIN OPENSSH PRIVATE KEY-----',
  'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ',
  'AAAAC3NzaC1lZDI1NTE5AAAAIJm2xq7yF0c7sP',
  '-----END OPENSSH PRIVATE KEY-----',
].join('\n');
const URL_SECRET = 'redis://:pass-w0rd-123@10.0.0.5:6379';

const cases: readonly { name: string; secrets: string[]; text: string }[] = [
  { name: 'no secret in the text', secrets: ['tok-123456'], text: 'Step 1/3 : FROM base\nok\n' },
  { name: 'no secrets at all', secrets: [], text: 'anything tok-123456\n' },
  { name: 'one secret, twice', secrets: ['tok-123456'], text: 'a tok-123456 b tok-123456\n' },
  { name: 'at the very start and end', secrets: ['tok-123456'], text: 'tok-123456 mid tok-123456' },
  {
    name: 'a URL and the password inside it',
    secrets: [URL_SECRET, 'pass-w0rd-123'],
    text: `to ${URL_SECRET} then pass-w0rd-123\n`,
  },
  {
    name: 'only the contained one present',
    secrets: [URL_SECRET, 'pass-w0rd-123'],
    text: 'redis://:pass-w0rd-123@other\n',
  },
  {
    name: 'a private key whole and line by line',
    secrets: [KEY],
    text: `${KEY}\nagain AAAAC3NzaC1lZDI1NTE5AAAAIJm2xq7yF0c7sP\n`,
  },
  {
    name: 'multi-byte text around a secret',
    secrets: ['sécret-ünïcode'],
    text: 'héllo sécret-ünïcode ✓ — sécret-ünïcode\n',
  },
  { name: 'overlapping occurrences', secrets: ['abab'], text: 'abababab ababab\n' },
];

for (const { name, secrets, text } of cases) {
  test(`maskBytes masks the UTF-8 bytes exactly as maskSecrets masks the text: ${name}`, (t) => {
    const variants = secretVariants(secrets);
    const masked = maskBytes(Buffer.from(text), byteVariants(variants));
    t.is(masked.toString('utf8'), maskSecrets(text, variants));
    for (const secret of secrets) t.false(masked.includes(secret));
  });
}

test('bytes without a secret come back as they are, not copied', (t) => {
  const bytes = Buffer.from('plain output\n');
  t.is(maskBytes(bytes, byteVariants(secretVariants(['tok-123456']))), bytes);
});

test('the probes are the variants that contain no other one', (t) => {
  const variants = secretVariants([URL_SECRET, 'pass-w0rd-123', 'other-token-9']);
  const { probes } = byteVariants(variants);
  t.deepEqual(probes.map((probe) => probe.toString()).sort(), ['other-token-9', 'pass-w0rd-123']);
});

const joined = (pieces: readonly Buffer[]): string => Buffer.concat(pieces).toString('utf8');

test('the line masker finds a secret split across chunks and gives whole lines only', (t) => {
  const masker = createLineMasker(['tok-123456']);
  t.deepEqual(masker.push(Buffer.from('fatal: tok-12')), []);
  t.is(
    joined(masker.push(Buffer.from('3456 rejected\nnext line\npartial tok'))),
    'fatal: *** rejected\nnext line\n',
  );
  t.is(joined(masker.push('-123456 end')), '');
  t.is(joined(masker.end()), 'partial *** end');
  t.deepEqual(masker.end(), []);
});

test('the line masker keeps a multi-byte character split across chunks whole', (t) => {
  const masker = createLineMasker([]);
  const bytes = Buffer.from('héllo ✓\nnext\n');
  const out = [
    ...masker.push(bytes.subarray(0, 2)),
    ...masker.push(bytes.subarray(2, 8)),
    ...masker.push(bytes.subarray(8)),
  ];
  t.is(joined([...out, ...masker.end()]), 'héllo ✓\nnext\n');
});

test('the line masker hands out views of a chunk holding no secret, and masks secrets added later', (t) => {
  const masker = createLineMasker(['tok-123456']);
  // Memory of its own (not Node's shared pool of small buffers), as a command's output chunk has.
  const chunk = Buffer.from(new TextEncoder().encode('line one\nline two\n').buffer);
  const [piece] = masker.push(chunk);
  t.is(piece?.buffer, chunk.buffer);
  masker.addSecrets(['late-secret-xyz']);
  t.is(joined(masker.push('now late-secret-xyz and tok-123456\n')), 'now *** and ***\n');
});

test('the line masker writes a NUL byte as a newline (git -z listings read one entry a line)', (t) => {
  const masker = createLineMasker(['tok-123456']);
  const chunk = Buffer.from('100644 blob a\t.devcontainer.json\u0000040000 tree b\tsrc tok-123456\u0000');
  const original = Buffer.from(chunk);
  const out = Buffer.concat([...masker.push(chunk), ...masker.end()]).toString();
  t.is(out, '100644 blob a\t.devcontainer.json\n040000 tree b\tsrc ***\n');
  t.deepEqual(chunk, original, "the caller's bytes are left as they were");
});
