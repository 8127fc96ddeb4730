// Output split into whole lines as it streams: complete lines at once, the line in progress held,
// let go only up to its last whole character.
import test from 'ava';
import { createLineSplitter } from '../../../src/logs/line-splitter.js';

const texts = (pieces: Buffer[]): string[] => pieces.map((piece) => piece.toString('utf8'));

test('complete lines go at once; the line in progress is held until its newline, whole', (t) => {
  const lines = createLineSplitter();
  t.deepEqual(texts(lines.push(Buffer.from('one\ntw'))), ['one\n']);
  t.is(lines.held(), 2);
  t.deepEqual(texts(lines.push(Buffer.from('o'))), []);
  t.deepEqual(texts(lines.push(Buffer.from('\nthree\nfo'))), ['two\n', 'three\n']);
  t.is(lines.end().toString('utf8'), 'fo');
  t.is(lines.held(), 0);
});

test('a line in progress is let go up to its last whole character; the character waits', (t) => {
  const lines = createLineSplitter();
  const e = Buffer.from('é');
  t.deepEqual(texts(lines.push(Buffer.concat([Buffer.from('caf'), e.subarray(0, 1)]))), []);
  t.is(lines.release().toString('utf8'), 'caf');
  t.is(lines.held(), 1);
  t.deepEqual(texts(lines.push(Buffer.concat([e.subarray(1), Buffer.from('\n')]))), ['é\n']);
  t.is(lines.release().length, 0);
});
