// Smart HTTP(S) git server for the stack: runs `git http-backend` as a CGI (argv array, no shell)
// for every request, with GIT_PROJECT_ROOT and GIT_HTTP_EXPORT_ALL. Optional TLS and Basic auth.
// Paths under `/no-filter/` serve the same repositories as a server without partial clone support
// (`uploadpack.allowFilter=false` in the command scope, which beats the repositories' own `true`).
// Usage: node --import tsx git-http.ts <config.json>
//   config: {port, projectRoot, tls?: {keyFile, certFile}, auth?: {user, password}}
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';

interface GitHttpConfig {
  port: number;
  projectRoot: string;
  tls?: { keyFile: string; certFile: string };
  auth?: { user: string; password: string };
}

const configPath = process.argv[2];
if (!configPath) {
  console.error('usage: git-http.ts <config.json>');
  process.exit(2);
}
const config = JSON.parse(fs.readFileSync(configPath, 'utf8')) as GitHttpConfig;

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}

function authorized(req: http.IncomingMessage): string | undefined | false {
  if (!config.auth) return undefined;
  const h = req.headers.authorization;
  if (!h || !/^basic /i.test(h)) return false;
  const decoded = Buffer.from(h.slice(6).trim(), 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  if (i < 0) return false;
  const user = decoded.slice(0, i);
  return safeEqual(user, config.auth.user) && safeEqual(decoded.slice(i + 1), config.auth.password)
    ? user
    : false;
}

const NO_FILTER_PREFIX = '/no-filter/';

function handler(req: http.IncomingMessage, res: http.ServerResponse): void {
  const user = authorized(req);
  if (user === false) {
    res.writeHead(401, { 'www-authenticate': 'Basic realm="ibs-stack git"', 'content-type': 'text/plain' });
    res.end('authentication required\n');
    return;
  }
  const url = new URL(req.url ?? '/', 'http://git');
  const requested = decodeURIComponent(url.pathname);
  const noFilter = requested.startsWith(NO_FILTER_PREFIX);
  const pathInfo = noFilter ? requested.slice(NO_FILTER_PREFIX.length - 1) : requested;
  if (pathInfo.split('/').includes('..') || pathInfo.includes('\0')) {
    res.writeHead(400).end('bad path\n');
    return;
  }
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    GIT_PROJECT_ROOT: config.projectRoot,
    GIT_HTTP_EXPORT_ALL: '1',
    GATEWAY_INTERFACE: 'CGI/1.1',
    SERVER_PROTOCOL: `HTTP/${req.httpVersion}`,
    REQUEST_METHOD: req.method ?? 'GET',
    PATH_INFO: pathInfo,
    QUERY_STRING: url.search.replace(/^\?/, ''),
    CONTENT_TYPE: req.headers['content-type'] ?? '',
    REMOTE_ADDR: req.socket.remoteAddress ?? '',
    REMOTE_USER: user ?? '',
    HTTP_CONTENT_ENCODING: req.headers['content-encoding'] ?? '',
    GIT_PROTOCOL: (req.headers['git-protocol'] as string | undefined) ?? '',
    ...(noFilter
      ? { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'uploadpack.allowFilter', GIT_CONFIG_VALUE_0: 'false' }
      : {}),
  };
  if (req.headers['content-length']) env.CONTENT_LENGTH = req.headers['content-length'];
  const cgi = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  req.pipe(cgi.stdin);
  cgi.stdin.on('error', () => undefined);
  cgi.stderr.on('data', (d: Buffer) => process.stderr.write(d));
  let head = Buffer.alloc(0);
  let headersDone = false;
  cgi.stdout.on('data', (chunk: Buffer) => {
    if (headersDone) {
      res.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    let end = head.indexOf('\r\n\r\n');
    let sep = 4;
    if (end < 0) {
      end = head.indexOf('\n\n');
      sep = 2;
    }
    if (end < 0) return;
    headersDone = true;
    let status = 200;
    const headers: Record<string, string> = {};
    for (const line of head.subarray(0, end).toString('latin1').split(/\r?\n/)) {
      const i = line.indexOf(':');
      if (i < 0) continue;
      const k = line.slice(0, i).trim();
      const v = line.slice(i + 1).trim();
      if (k.toLowerCase() === 'status') status = Number.parseInt(v, 10) || 200;
      else headers[k] = v;
    }
    res.writeHead(status, headers);
    const rest = head.subarray(end + sep);
    if (rest.length > 0) res.write(rest);
  });
  cgi.on('close', (code) => {
    if (!headersDone) {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`git http-backend failed (${code})\n`);
    } else res.end();
  });
  res.on('close', () => {
    if (!res.writableFinished) cgi.kill();
  });
}

const server = config.tls
  ? https.createServer(
      { key: fs.readFileSync(config.tls.keyFile), cert: fs.readFileSync(config.tls.certFile) },
      handler,
    )
  : http.createServer(handler);
server.listen(config.port, '127.0.0.1', () => {
  console.log(
    `git ${config.tls ? 'https' : 'http'} server on 127.0.0.1:${config.port} serving ${config.projectRoot}`,
  );
});
const stop = (): void => {
  server.close();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
