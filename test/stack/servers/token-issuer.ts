// A Docker registry token issuer (distribution's `auth.token` realm) for the stack.
//   GET  /token?service=S&scope=T:NAME:ACTIONS[&scope=...]  with Basic credentials -> {token, access_token, expires_in, issued_at}
//   POST /token  (OAuth2 password grant form, as BuildKit sends it)              -> {access_token, token, expires_in, issued_at, scope}
//   GET  /count                                                                   -> {"issued": n}
// Tokens are ES256 JWTs with the signing certificate in the `x5c` header; the registry trusts that
// certificate (rootcertbundle). Valid users get every scope they ask for; anonymous requests get a
// token without access; a wrong password gets 401.
// Usage: node --import tsx token-issuer.ts <config.json>
//   config: {port, issuer, service, keyFile, certFile, expiresIn, users: {name: password}}
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';

interface IssuerConfig {
  port: number;
  issuer: string;
  service: string;
  keyFile: string;
  certFile: string;
  expiresIn: number;
  users: Record<string, string>;
}

interface Access {
  type: string;
  name: string;
  actions: string[];
}

const configPath = process.argv[2];
if (!configPath) {
  console.error('usage: token-issuer.ts <config.json>');
  process.exit(2);
}
const config = JSON.parse(fs.readFileSync(configPath, 'utf8')) as IssuerConfig;
const key = crypto.createPrivateKey(fs.readFileSync(config.keyFile));
const certDer = new crypto.X509Certificate(fs.readFileSync(config.certFile)).raw.toString('base64');
let issued = 0;

const b64url = (b: Buffer | string): string => Buffer.from(b).toString('base64url');

function parseScope(scope: string): Access | undefined {
  // type:name:actions, where name may itself contain ':' (e.g. a port); actions are the last part.
  const first = scope.indexOf(':');
  const last = scope.lastIndexOf(':');
  if (first < 0 || last === first) return undefined;
  const actions = scope
    .slice(last + 1)
    .split(',')
    .filter((a) => a !== '');
  return { type: scope.slice(0, first), name: scope.slice(first + 1, last), actions };
}

function sign(subject: string, access: Access[], expiresIn: number): { token: string; issuedAt: Date } {
  const now = Math.floor(Date.now() / 1000);
  const header = { alg: 'ES256', typ: 'JWT', x5c: [certDer] };
  const claims = {
    iss: config.issuer,
    sub: subject,
    aud: config.service,
    exp: now + expiresIn,
    nbf: now - 10,
    iat: now,
    jti: crypto.randomUUID(),
    access,
  };
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  const sig = crypto.sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' });
  issued += 1;
  return { token: `${input}.${b64url(sig)}`, issuedAt: new Date(now * 1000) };
}

type Who = { user: string } | { anonymous: true } | { denied: true };

function check(user: string | undefined, password: string | undefined): Who {
  if (user === undefined) return { anonymous: true };
  const expected = config.users[user];
  if (expected === undefined || password === undefined) return { denied: true };
  const a = Buffer.from(expected);
  const b = Buffer.from(password);
  return a.length === b.length && crypto.timingSafeEqual(a, b) ? { user } : { denied: true };
}

function basic(req: http.IncomingMessage): { user?: string; password?: string } {
  const h = req.headers.authorization;
  if (!h || !/^basic /i.test(h)) return {};
  const decoded = Buffer.from(h.slice(6).trim(), 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  return i < 0 ? { user: decoded } : { user: decoded.slice(0, i), password: decoded.slice(i + 1) };
}

function send(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: http.OutgoingHttpHeaders = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > 64 * 1024) {
        reject(new Error('body too large'));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function grant(
  res: http.ServerResponse,
  who: Who,
  service: string | null,
  scopes: string[],
  oauth: boolean,
): void {
  if ('denied' in who) {
    const body = oauth
      ? { error: 'invalid_grant', error_description: 'invalid username or password' }
      : { errors: [{ code: 'UNAUTHORIZED', message: 'invalid username or password' }] };
    send(res, 401, body, { 'www-authenticate': 'Basic realm="token-issuer"' });
    return;
  }
  if (service !== null && service !== config.service) {
    send(res, 400, { errors: [{ code: 'UNSUPPORTED', message: `unknown service ${service}` }] });
    return;
  }
  const access =
    'user' in who
      ? scopes.map(parseScope).filter((a): a is Access => a !== undefined && a.actions.length > 0)
      : [];
  const subject = 'user' in who ? who.user : '';
  const { token, issuedAt } = sign(subject, access, config.expiresIn);
  // One line per token for debugging (never the token or a password).
  const granted = access.map((a) => `${a.type}:${a.name}:${a.actions.join(',')}`).join(' ');
  console.log(
    `${new Date().toISOString()} token #${issued} ${oauth ? 'POST' : 'GET'} sub=${subject || '-'} ${granted}`,
  );
  send(res, 200, {
    token,
    access_token: token,
    expires_in: config.expiresIn,
    issued_at: issuedAt.toISOString(),
    ...(oauth ? { scope: scopes.join(' ') } : {}),
  });
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://issuer');
  if (req.method === 'GET' && url.pathname === '/count') {
    send(res, 200, { issued });
    return;
  }
  if (url.pathname !== '/token') {
    send(res, 404, { errors: [{ code: 'NOT_FOUND', message: 'not found' }] });
    return;
  }
  if (req.method === 'GET') {
    const { user, password } = basic(req);
    grant(
      res,
      check(user, password),
      url.searchParams.get('service'),
      url.searchParams.getAll('scope'),
      false,
    );
    return;
  }
  if (req.method === 'POST') {
    readBody(req)
      .then((text) => {
        const form = new URLSearchParams(text);
        if (form.get('grant_type') !== 'password') {
          // refresh_token grants are not supported: clients fall back to the password grant or GET.
          send(res, 400, { error: 'unsupported_grant_type' });
          return;
        }
        const username = form.get('username') ?? undefined;
        const who = check(username, form.get('password') ?? undefined);
        const scopes = form.getAll('scope').flatMap((s) => s.split(' ').filter((x) => x !== ''));
        grant(res, who, form.get('service'), scopes, true);
      })
      .catch(() => send(res, 400, { error: 'invalid_request' }));
    return;
  }
  send(res, 405, { errors: [{ code: 'UNSUPPORTED', message: 'method not allowed' }] });
});

server.listen(config.port, '127.0.0.1', () => {
  console.log(`token issuer listening on 127.0.0.1:${config.port} (service ${config.service})`);
});
const stop = (): void => {
  server.close();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
