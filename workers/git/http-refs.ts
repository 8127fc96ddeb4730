/**
 * Smart HTTP without a git process: the refs from one `GET info/refs?service=git-upload-pack` (the
 * advertisement git itself reads first), parsed here, and the requests http-trees.ts makes. Only
 * where it sees what git would: no proxy, the same CA file, no redirect followed, the credential
 * only in an Authorization header to the repository's own origin. Anything else: git runs.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Transport } from '../../src/registry/transport.js';
import { basicAuthHeader } from '../../src/secrets/basic-auth.js';
import type { StepDeps } from '../common/step-deps.js';
import type { BuildPlan } from '../plan/plan-types.js';
import { GIT_OBJECT_ID_PATTERN } from '../../src/rules/text-patterns.js';

const OBJECT_ID = new RegExp(GIT_OBJECT_ID_PATTERN);
/** A ref advertisement beyond this is left to git. */
const MAX_ADVERTISEMENT_BYTES = 32 * 1024 * 1024;
const ADVERTISEMENT_TYPE = 'application/x-git-upload-pack-advertisement';
/** Variables under which git would go another way (a proxy, another trust store). */
const GIT_ONLY_VARIABLES = [
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'http_proxy',
  'https_proxy',
  'ALL_PROXY',
  'all_proxy',
];

/** One keep-alive transport per trust store (the CA file's text; '' for the default one). */
const transports = new Map<string, Transport>();

/** The refs a repository advertises, and the capabilities of its upload-pack. */
export interface Advertisement {
  readonly refs: Array<[id: string, ref: string]>;
  readonly capabilities: readonly string[];
}

/**
 * The `[object id, ref]` pairs of a smart-HTTP v0 advertisement of git-upload-pack (pure): the
 * service line and its flush, then one ref a pkt-line (capabilities after a NUL on the first).
 * Undefined when the body is not one (git then reads it itself). An empty repository lists nothing.
 */
export function parseAdvertisement(body: Buffer): Advertisement | undefined {
  const lines: string[] = [];
  let at = 0;
  while (at < body.length) {
    const size = Number.parseInt(body.subarray(at, at + 4).toString('latin1'), 16);
    if (!/^[0-9a-f]{4}$/.test(body.subarray(at, at + 4).toString('latin1')) || (size > 0 && size < 4))
      return undefined;
    if (size === 0) {
      lines.push('');
      at += 4;
      continue;
    }
    if (at + size > body.length) return undefined;
    lines.push(
      body
        .subarray(at + 4, at + size)
        .toString('utf8')
        .replace(/\n$/, ''),
    );
    at += size;
  }
  if (lines.length < 3 || lines[0] !== '# service=git-upload-pack' || lines[1] !== '' || lines.at(-1) !== '')
    return undefined;
  const refs: Array<[string, string]> = [];
  const capabilities = (lines[2]?.split('\0')[1] ?? '').split(' ').filter((c) => c !== '');
  for (const line of lines.slice(2, -1)) {
    const [id = '', rest = ''] = line.split('\0', 1)[0]?.split(' ') ?? [];
    if (!OBJECT_ID.test(id) || rest === '') return undefined;
    if (rest !== 'capabilities^{}') refs.push([id, rest]);
  }
  return { refs, capabilities };
}

/** The refs `git ls-remote -- URL <patterns>` would list (its tail match: `/ref` ends with `/pattern`). */
export function matchingRefs(
  refs: ReadonlyArray<readonly [string, string]>,
  patterns: readonly string[],
): Array<[id: string, ref: string]> {
  return refs
    .filter(([, ref]) => patterns.length === 0 || patterns.some((p) => `/${ref}`.endsWith(`/${p}`)))
    .map(([id, ref]) => [id, ref]);
}

/** The trust store git would use (its CA file's text, '' for the default), or undefined: leave it to git. */
async function trustStore(env: Readonly<Record<string, string>>): Promise<string | undefined> {
  const file = env.GIT_SSL_CAINFO ?? env.SSL_CERT_FILE;
  if (file === undefined) return env.SSL_CERT_DIR === undefined ? '' : undefined;
  return readFile(file, 'utf8').catch(() => undefined);
}

function transportFor(ca: string): Transport {
  let transport = transports.get(ca);
  if (transport === undefined) {
    transport = new Transport(ca === '' ? { maxSockets: 8 } : { maxSockets: 8, ca });
    transports.set(ca, transport);
  }
  return transport;
}

/** Rejects with the signal's reason once it aborts (never resolves). */
const aborted = (signal: AbortSignal): Promise<never> =>
  new Promise((_resolve, reject) => {
    if (signal.aborted) reject(signal.reason as Error);
    else signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
  });

/** One request to a repository's smart-HTTP service, as git would make it. */
export interface SmartHttpRequest {
  /** Appended to the clone URL: `/info/refs?service=git-upload-pack`, `/git-upload-pack`. */
  readonly path: string;
  readonly headers?: Record<string, string>;
  readonly body?: Buffer;
  readonly maxBytes: number;
  readonly timeoutMs: number;
}

/** A response: its status, media type and body. */
export interface SmartHttpResponse {
  readonly status: number;
  readonly type: string;
  readonly body: Buffer;
}

/**
 * The repository's smart-HTTP service as git would see it, or undefined when only git can reach it
 * the way git does (another scheme, a proxy, a CA directory). The credential goes in an
 * Authorization header to the clone URL's origin only; redirects are never followed.
 */
export async function smartHttp(
  plan: BuildPlan,
  deps: Pick<StepDeps, 'config'>,
): Promise<((request: SmartHttpRequest, signal: AbortSignal) => Promise<SmartHttpResponse>) | undefined> {
  const { url } = plan;
  const env = deps.config.childEnv;
  if (url.scheme !== 'https' && !(url.scheme === 'http' && deps.config.git.allowInsecureProtocols))
    return undefined;
  if (GIT_ONLY_VARIABLES.some((name) => env[name] !== undefined)) return undefined;
  const ca = url.scheme === 'https' ? await trustStore(env) : '';
  if (ca === undefined) return undefined;
  const cred = plan.gitCredential;
  const auth: Record<string, string> =
    cred?.kind === 'https' ? { authorization: basicAuthHeader(cred.username, cred.token) } : {};
  return async (request, signal) => {
    const target = new URL(url.cloneUrl);
    const [path = '', query] = request.path.split('?');
    target.pathname = `${target.pathname.replace(/\/+$/, '')}${path}`;
    if (query !== undefined) target.search = `?${query}`;
    const res = await Promise.race([
      transportFor(ca).send({
        method: request.body === undefined ? 'GET' : 'POST',
        url: target,
        headers: { 'user-agent': 'git/2 (image-build-service)', ...request.headers, ...auth },
        maxBytes: request.maxBytes,
        timeoutMs: request.timeoutMs,
        maxRedirects: 0,
        ...(request.body === undefined ? {} : { body: request.body }),
      }),
      aborted(signal),
    ]);
    const type =
      String(res.headers['content-type'] ?? '')
        .split(';')[0]
        ?.trim() ?? '';
    return { status: res.status, type, body: res.body };
  };
}

/**
 * The repository's advertisement (refs and capabilities), or undefined when git has to list them
 * (another scheme, a proxy, another answer than a smart-HTTP advertisement, or any failure: git
 * then says what went wrong). Only a cancellation throws.
 */
export function advertisement(
  plan: BuildPlan,
  deps: Pick<StepDeps, 'config'>,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<Advertisement | undefined> {
  // One look-up per job (its signal) and repository: the head the answered commits checked is the
  // commit its trees are read at, and the server is asked once.
  const cred = plan.gitCredential;
  const key = createHash('sha256')
    .update(JSON.stringify([plan.url.cloneUrl, cred?.kind === 'https' ? [cred.username, cred.token] : null]))
    .digest('hex');
  let ofJob = lookups.get(signal);
  if (ofJob === undefined) lookups.set(signal, (ofJob = new Map()));
  let looked = ofJob.get(key);
  if (looked === undefined) ofJob.set(key, (looked = lookUp(plan, deps, signal, timeoutMs)));
  return looked;
}

/** The look-ups of each job so far, by repository (gone with the job's signal). */
const lookups = new WeakMap<AbortSignal, Map<string, Promise<Advertisement | undefined>>>();

async function lookUp(
  plan: BuildPlan,
  deps: Pick<StepDeps, 'config'>,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<Advertisement | undefined> {
  try {
    const send = await smartHttp(plan, deps);
    if (send === undefined) return undefined;
    const res = await send(
      {
        path: '/info/refs?service=git-upload-pack',
        headers: { pragma: 'no-cache' },
        maxBytes: MAX_ADVERTISEMENT_BYTES,
        timeoutMs,
      },
      signal,
    );
    if (res.status !== 200 || res.type !== ADVERTISEMENT_TYPE) return undefined;
    return parseAdvertisement(res.body);
  } catch (err) {
    if (signal.aborted) throw err;
    return undefined;
  }
}

/** The refs of the repository's advertisement (see advertisement), or undefined: git lists them. */
export async function advertisedRefs(
  plan: BuildPlan,
  deps: Pick<StepDeps, 'config'>,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<Array<[id: string, ref: string]> | undefined> {
  return (await advertisement(plan, deps, signal, timeoutMs))?.refs;
}
