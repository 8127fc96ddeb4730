// A reader that does not read (a slow terminal, a stalled CI log pipe) must not stop ibs: the
// sink queues and writes off the event loop, timers keep firing, and nothing is dropped.
import test from 'ava';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const SINK = fileURLToPath(new URL('../../../../src/client/output.ts', import.meta.url));
const BYTES = 4 * 1024 * 1024;

const child = `
import { Sink } from ${JSON.stringify(SINK)};
import { writeSync } from 'node:fs';
const sink = new Sink(2, (t) => t.replaceAll('SECRET', '***'));
sink.write('SECRET' + 'x'.repeat(${BYTES} - 6));
const asked = performance.now();
setTimeout(() => {
  writeSync(1, String(Math.round(performance.now() - asked)) + '\\n');
  void sink.flush().then(() => process.exit(0));
}, 50);
`;

test('a stalled stderr reader holds up neither the event loop nor drops a byte', async (t) => {
  const proc = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', child], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stderr.pause();
  const [line] = (await once(proc.stdout, 'data')) as [Buffer];
  const delay = Number(line.toString().trim());
  t.true(delay < 10_000, `the 50 ms timer fired after ${delay} ms while nobody read stderr`);
  const chunks: Buffer[] = [];
  proc.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
  proc.stderr.resume();
  const [code] = (await once(proc, 'exit')) as [number];
  t.is(code, 0);
  const text = Buffer.concat(chunks).toString();
  t.is(text.length, BYTES - 3);
  t.true(text.startsWith('***xxx'));
});
