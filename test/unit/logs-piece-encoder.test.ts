import test from 'ava';
import { createPieceEncoder } from '../../src/logs/piece-encoder.js';

const push = (encoder: ReturnType<typeof createPieceEncoder>, text: string): void =>
  encoder.push(text, Buffer.byteLength(text));
const text = (pieces: Buffer[]): string => Buffer.concat(pieces).toString('utf8');

test('pieces hold exactly what was pushed since the last take, in order, multi-byte text included', (t) => {
  const encoder = createPieceEncoder(16, 64);
  t.deepEqual(encoder.take(), []);
  push(encoder, 'one\n');
  push(encoder, 'caf\u00e9 \u2713\n');
  t.is(text(encoder.take()), 'one\ncaf\u00e9 \u2713\n');
  t.deepEqual(encoder.take(), []);
  // Crossing slab boundaries (16, 32, 64 bytes, then a text larger than the largest slab).
  let expected = '';
  for (let i = 0; i < 20; i += 1) {
    const line = `line ${i} ${'\u00e9'.repeat(i)}\n`;
    push(encoder, line);
    expected += line;
  }
  const big = `${'x'.repeat(200)}\n`;
  push(encoder, big);
  push(encoder, 'after\n');
  t.is(text(encoder.take()), `${expected}${big}after\n`);
});

test('a piece taken is never written again by later pushes', (t) => {
  const encoder = createPieceEncoder(64, 64);
  push(encoder, 'first\n');
  const [first] = encoder.take();
  const copy = Buffer.from(first ?? Buffer.alloc(0));
  for (let i = 0; i < 30; i += 1) push(encoder, `more ${i}\n`);
  t.true(first?.equals(copy));
  t.is(first?.toString('utf8'), 'first\n');
  t.true(text(encoder.take()).startsWith('more 0\nmore 1\n'));
});

test('one slab serves many small pushes: a take after them is one piece', (t) => {
  const encoder = createPieceEncoder(1024, 4096);
  for (let i = 0; i < 50; i += 1) push(encoder, 'twelve bytes');
  t.is(encoder.take().length, 1);
});
