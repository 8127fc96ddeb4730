// What a redis-server of the test's own runs, as its MONITOR reports each command: how a test sees
// what clients it does not hold ask of Redis. It speaks the protocol itself: ioredis's monitor mode
// misreads lines that arrive together with the reply to MONITOR on a busy server.
import { connect } from 'node:net';

export interface RedisMonitor {
  /** The commands seen so far, one MONITOR line each (`<time> [<db> <client>] "<name>" "<arg>" ...`). */
  lines: () => readonly string[];
  close: () => void;
}

const command = (...parts: string[]): string =>
  `*${parts.length}\r\n${parts.map((p) => `$${Buffer.byteLength(p)}\r\n${p}\r\n`).join('')}`;

/** Starts monitoring the server at `url` (redis://:password@host:port); resolves once it does. */
export function monitorRedis(url: string): Promise<RedisMonitor> {
  const { hostname, port, password } = new URL(url);
  const socket = connect({ host: hostname, port: Number(port) });
  const lines: string[] = [];
  let buffered = '';
  let acknowledged = 0;
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const complete = buffered.split('\r\n');
      buffered = complete.pop() ?? '';
      for (const line of complete) {
        if (line.startsWith('-')) reject(new Error(`MONITOR refused: ${line}`));
        else if (acknowledged < 2 && line === '+OK') acknowledged += 1;
        else lines.push(line.slice(1));
      }
      if (acknowledged === 2) resolve({ lines: () => lines, close: () => socket.destroy() });
    });
    socket.write(command('AUTH', decodeURIComponent(password)) + command('MONITOR'));
  });
}
