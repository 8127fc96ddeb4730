// The listen address (`--host`): the real service process bound to 127.0.0.1 answers there and
// refuses connections to another loopback address (127.0.0.2); unset, it listens on every interface.
import test from 'ava';
import { isListening, spawnService } from '../../helpers/service-process.js';

async function listening(
  args: string[],
): Promise<{ port: number; address: unknown; stop: () => Promise<void> }> {
  const service = spawnService(['--port', '0', ...args]);
  const line = await service.waitForLog('listening');
  return {
    port: line.port as number,
    address: line.address,
    stop: async () => {
      service.child.kill('SIGTERM');
      await service.exited;
    },
  };
}

test('--host 127.0.0.1: reachable on 127.0.0.1 only', async (t) => {
  const service = await listening(['--host', '127.0.0.1']);
  t.teardown(service.stop);
  t.is(service.address, '127.0.0.1');
  t.true(await isListening(service.port, '127.0.0.1'));
  t.false(await isListening(service.port, '127.0.0.2'));
});

test('no --host: every interface, 127.0.0.2 included', async (t) => {
  const service = await listening([]);
  t.teardown(service.stop);
  t.true(await isListening(service.port, '127.0.0.1'));
  t.true(await isListening(service.port, '127.0.0.2'));
});
