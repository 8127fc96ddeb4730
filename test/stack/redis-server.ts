// A real redis-server (Debian's package) for the stack and for tests that stop and start their own:
// its config file (0600: the password is never in argv) and a check that it answers AUTH + PING.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

/**
 * Writes `<dir>/redis.conf`: loopback only, a password, no persistence at all, then `extra` lines
 * (a cluster node's). Returns its path.
 */
export function writeRedisConfig(
  dir: string,
  port: number,
  password: string,
  extra: readonly string[] = [],
): string {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, 'redis.conf');
  const lines = [
    `port ${port}`,
    'bind 127.0.0.1',
    'protected-mode yes',
    `requirepass ${password}`,
    'save ""',
    'appendonly no',
    `dir ${dir}`,
    'daemonize no',
    // redis-server rewrites its process title (and with it the environment block): keep the config
    // path in it, so that the stack still knows the process as its own (`down`, `status`).
    'proc-title-template "{title} {listen-addr} {server-mode} {config-file}"',
    'loglevel notice',
    ...extra,
  ];
  fs.writeFileSync(file, `${lines.join('\n')}\n`, { mode: 0o600 });
  return file;
}

export const redisUrl = (port: number, password: string): string =>
  `redis://:${encodeURIComponent(password)}@127.0.0.1:${port}`;

/** Whether a redis-server on 127.0.0.1:port accepts this password and answers PING. */
export function redisAnswers(port: number, password: string, timeoutMs = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let text = '';
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => {
      const arg = (s: string): string => `$${Buffer.byteLength(s)}\r\n${s}\r\n`;
      socket.write(`*2\r\n${arg('AUTH')}${arg(password)}*1\r\n${arg('PING')}`);
    });
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (text.includes('+PONG')) done(text.startsWith('+OK'));
      else if (text.startsWith('-') || text.includes('\r\n-')) done(false);
    });
  });
}
