/**
 * The refs of an http(s) repository without a git process: one `GET info/refs?service=git-upload-pack`
 * (the smart-HTTP advertisement git itself reads first), parsed here. It stands in for `git ls-remote`
 * only where it sees what git would: no proxy, the same CA file, no redirect followed, the credential
 * only in an Authorization header to the repository's own origin. Anything else is `undefined`: git runs.
 */
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

/**
 * The `[object id, ref]` pairs of a smart-HTTP v0 advertisement of git-upload-pack (pure): the
 * service line and its flush, then one ref a pkt-line (capabilities after a NUL on the first).
 * Undefined when the body is not one (git then reads it itself). An empty repository lists nothing.
 */
export function parseAdvertisement(body: Buffer): Array<[id: string, ref: string]> | undefined {
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
  for (const line of lines.slice(2, -1)) {
    const [id = '', rest = ''] = line.split('\0', 1)[0]?.split(' ') ?? [];
    if (!OBJECT_ID.test(id) || rest === '') return undefined;
    if (rest !== 'capabilities^{}') refs.push([id, rest]);
  }
  return refs;
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

/**
 * The repository's refs from its advertisement, or undefined when git has to list them (another
 * scheme, a proxy, another answer than a smart-HTTP advertisement, or any failure: git then says
 * what went wrong, as it always did). Only a cancellation throws.
 */
export async function advertisedRefs(
  plan: BuildPlan,
  deps: Pick<StepDeps, 'config'>,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<Array<[id: string, ref: string]> | undefined> {
  const { url } = plan;
  const env = deps.config.childEnv;
  if (url.scheme !== 'https' && !(url.scheme === 'http' && deps.config.allowInsecureGitProtocols))
    return undefined;
  if (GIT_ONLY_VARIABLES.some((name) => env[name] !== undefined)) return undefined;
  const ca = url.scheme === 'https' ? await trustStore(env) : '';
  if (ca === undefined) return undefined;
  const cred = plan.gitCredential;
  const headers: Record<string, string> = { 'user-agent': 'git/2 (image-build-service)', pragma: 'no-cache' };
  if (cred?.kind === 'https') headers.authorization = basicAuthHeader(cred.username, cred.token);
  try {
    // Where git itself asks first: the clone URL, then `/info/refs`.
    const refsUrl = new URL(url.cloneUrl);
    refsUrl.pathname = `${refsUrl.pathname.replace(/\/+$/, '')}/info/refs`;
    refsUrl.search = '?service=git-upload-pack';
    const res = await Promise.race([
      transportFor(ca).send({
        method: 'GET',
        url: refsUrl,
        headers,
        maxBytes: MAX_ADVERTISEMENT_BYTES,
        timeoutMs,
        maxRedirects: 0,
      }),
      aborted(signal),
    ]);
    const type = String(res.headers['content-type'] ?? '')
      .split(';')[0]
      ?.trim();
    if (res.status !== 200 || type !== ADVERTISEMENT_TYPE) return undefined;
    return parseAdvertisement(res.body);
  } catch (err) {
    if (signal.aborted) throw err;
    return undefined;
  }
}
