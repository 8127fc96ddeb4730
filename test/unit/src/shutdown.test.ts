// The order of a graceful shutdown, on a real HTTP server: on the signal readiness fails and no
// queued build is taken before the listener closes; at the end of the grace the builds are handed
// back to the queue before running commands are killed.
import { createServer, type Server } from 'node:http';
import test from 'ava';
import { createShutdown, type ShutdownController } from '../../../src/shutdown.js';
import { silentLogger } from '../../helpers/silent-logger.js';

async function listening(): Promise<Server> {
  const server = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

test('on the signal: stopping, then no take, then the listener closes; exit 0 once drained', async (t) => {
  const server = await listening();
  const steps: string[] = [];
  let controller: ShutdownController | undefined;
  let drain: () => void = () => undefined;
  const exited = new Promise<number>((resolve) => {
    controller = createShutdown({
      server,
      logger: silentLogger(),
      abort: new AbortController(),
      graceMs: 60_000,
      stopTaking: () => steps.push(`stop taking (stopping: ${String(controller?.stopping)})`),
      drained: () => new Promise((resolve) => (drain = resolve)),
      flush: async () => undefined,
      exit: resolve,
    });
  });
  server.once('close', () => steps.push('listener closed'));
  controller?.onSignal('SIGTERM');
  steps.push('signal handled');
  t.deepEqual(steps, ['stop taking (stopping: true)', 'signal handled']);
  await new Promise((resolve) => server.once('close', resolve));
  drain();
  t.is(await exited, 0);
  t.deepEqual(steps, ['stop taking (stopping: true)', 'signal handled', 'listener closed']);
});

test('the end of the grace: builds handed back first, then commands killed, exit non-zero', async (t) => {
  const server = await listening();
  const abort = new AbortController();
  const steps: string[] = [];
  const exited = new Promise<number>((resolve) => {
    const controller = createShutdown({
      server,
      logger: silentLogger(),
      abort,
      graceMs: 50,
      handBack: async () => {
        steps.push(`hand back (aborted: ${String(abort.signal.aborted)})`);
        return 1;
      },
      // A build runs until its commands are killed.
      drained: () =>
        new Promise((resolve) => abort.signal.addEventListener('abort', () => resolve(), { once: true })),
      flush: async () => undefined,
      exit: resolve,
    });
    controller.onSignal('SIGTERM');
  });
  abort.signal.addEventListener('abort', () => steps.push('commands killed'));
  t.not(await exited, 0);
  t.deepEqual(steps, ['hand back (aborted: false)', 'commands killed']);
});

test('a hand-back that never answers does not hold the kill', async (t) => {
  const server = await listening();
  const abort = new AbortController();
  const exited = new Promise<number>((resolve) => {
    createShutdown({
      server,
      logger: silentLogger(),
      abort,
      graceMs: 50,
      handBack: () => new Promise(() => undefined),
      drained: () =>
        new Promise((resolve) => abort.signal.addEventListener('abort', () => resolve(), { once: true })),
      flush: async () => undefined,
      exit: resolve,
    }).onSignal('SIGTERM');
  });
  t.not(await exited, 0);
  t.true(abort.signal.aborted);
});
