/**
 * Debian's real `nginx` in front of the service, as a plain process of the test: its own config,
 * pid, temp and log paths under a temp dir, listening on 127.0.0.1 on a free port, with a read
 * timeout (8 s unless said) and idle timeouts that cut a silent connection as real fronts do.
 * Each location passes to its own upstream (one service, or several replicas).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from './eventually.js';
import { isListening } from './service-process.js';
import { freePort } from '../stack/proc.js';

const NGINX_BIN = '/usr/sbin/nginx';

export interface FrontRoute {
  /** An nginx location, e.g. `/` or `= /build`. */
  readonly location: string;
  /** The service URLs (`http://127.0.0.1:PORT`) it passes to, round robin. */
  readonly upstreams: readonly string[];
}

export interface FrontOptions {
  readonly routes: readonly FrontRoute[];
  /** proxy_read_timeout and every idle timeout, in seconds (default 8). */
  readonly idleSeconds?: number;
}

export interface Front {
  readonly url: string;
  readonly child: ChildProcess;
  /** nginx's error log (it names upstream timeouts and clients that went away). */
  errorLog: () => string;
  /** The access log, one line per request: `status method uri request_time`. */
  accessLog: () => string;
  stop: () => Promise<void>;
}

const hostPort = (url: string): string => new URL(url).host;

function config(dir: string, port: number, options: FrontOptions): string {
  const idle = `${options.idleSeconds ?? 8}s`;
  const upstreams = options.routes.map(
    (route, i) =>
      `  upstream u${i} {\n${route.upstreams.map((u) => `    server ${hostPort(u)};\n`).join('')}    keepalive 8;\n  }\n`,
  );
  const locations = options.routes.map(
    (route, i) =>
      `    location ${route.location} {\n      proxy_pass http://u${i};\n` +
      '      proxy_http_version 1.1;\n      proxy_set_header Connection "";\n' +
      `      proxy_read_timeout ${idle};\n      proxy_send_timeout ${idle};\n` +
      '      proxy_connect_timeout 2s;\n    }\n',
  );
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
    .map((kind) => `  ${kind}_temp_path ${join(dir, 'temp', kind)};\n`)
    .join('');
  return `daemon off;
master_process off;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} info;
events { worker_connections 256; }
http {
  log_format front '$status $request_method $request_uri $request_time';
  access_log ${join(dir, 'access.log')} front;
${temp}${upstreams.join('')}  server {
    listen 127.0.0.1:${port};
    client_max_body_size 2m;
    keepalive_timeout ${idle};
    client_body_timeout ${idle};
    client_header_timeout ${idle};
    send_timeout ${idle};
${locations.join('')}  }
}
`;
}

/** Starts nginx; resolves once it accepts connections. */
export async function startFront(options: FrontOptions): Promise<Front> {
  const dir = mkdtempSync(join(tmpdir(), 'ibs-nginx-'));
  mkdirSync(join(dir, 'temp'));
  const port = await freePort();
  const file = join(dir, 'nginx.conf');
  writeFileSync(file, config(dir, port, options));
  const child = spawn(NGINX_BIN, ['-p', dir, '-e', join(dir, 'error.log'), '-c', file], {
    env: { PATH: '/usr/sbin:/usr/bin:/bin' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const read = (name: string) => (): string => {
    try {
      return readFileSync(join(dir, name), 'utf8');
    } catch {
      return '';
    }
  };
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await eventually(
      async () => {
        if (child.exitCode !== null) throw new Error(`nginx exited: ${stderr}${read('error.log')()}`);
        return isListening(port);
      },
      { timeout: 15_000, interval: 50, what: 'nginx to listen' },
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    errorLog: read('error.log'),
    accessLog: read('access.log'),
    stop,
  };
}
