/**
 * A builder endpoint that accepts connections and never answers: its probe can only time out, so a
 * test that reads readiness right after start sees the builder as up however loaded the machine is.
 */
import { createServer, type AddressInfo, type Socket } from 'node:net';

/** The endpoint (`tcp://127.0.0.1:<port>`), closed when the test ends. */
export async function silentEndpoint(t: { teardown: (fn: () => Promise<void>) => void }): Promise<string> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => void sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  return `tcp://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
