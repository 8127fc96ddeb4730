/**
 * Pushes again when the registry refuses a push only because of a concurrent push of the same
 * content (docs/behaviour.md, Known limits): a 400/404 to a manifest PUT or blob upload, or
 * BuildKit's `image "<ref>": already exists`; or when it is unavailable for a moment (502, 503,
 * 504). Never on 401, 403, 429 or another status (buildx shows the status, not the error code).
 */
import type { CommandLogWriter } from '../../src/logs/types.js';

/** Tries of the build's push in all: the first, and two more after a concurrent push's refusal. */
export const PUSH_TRIES = 3;
/** The pause before the second try; doubled before each next one (the other push ends meanwhile). */
export const PUSH_RETRY_DELAY_MS = 1_000;

/** containerd's message for a refused request: `unexpected status from PUT request to <url>: <status>`. */
const UNEXPECTED_STATUS = /unexpected status from (PUT|POST|PATCH|HEAD|GET) request to (\S+): (\d{3})\b/g;
/** A manifest PUT by digest or tag; a blob upload's commit. */
const MANIFEST_URL = /\/v2\/.+\/manifests\/[^/?\s]+$/;
const BLOB_UPLOAD_URL = /\/v2\/.+\/blobs\/uploads\//;

/** BuildKit's image store, when an identical build stored the same image name at the same moment. */
const IMAGE_EXISTS = /failed to solve: image "[^"\s]+": already exists/;

/**
 * The refusal of a concurrent push of the same content that `output` (one try's CLI output) ends
 * on, as a short phrase for the log; undefined when it failed otherwise (or shows a real refusal).
 */
export function concurrentPushRefusal(output: string): string | undefined {
  let found: string | undefined;
  // Every refusal of the try must be of that kind: one real refusal makes the failure real.
  for (const [, method, url = '', status = ''] of output.matchAll(UNEXPECTED_STATUS)) {
    const path = url.replace(/[?#].*$/, '');
    if (method === 'PUT' && MANIFEST_URL.test(path) && (status === '400' || status === '404'))
      found ??= `${status} on a manifest PUT`;
    else if (method === 'PUT' && BLOB_UPLOAD_URL.test(path) && status === '404')
      found ??= `${status} on a blob upload`;
    else return undefined;
  }
  if (found === undefined && IMAGE_EXISTS.test(output))
    found = "the builder's image store: the image name already exists";
  return found;
}

/** Tries of the build's push in all while the registry answers it is unavailable (502, 503, 504). */
export const UNAVAILABLE_PUSH_TRIES = 4;
/** The pause before the second try after an unavailable registry; doubled before each next one. */
export const UNAVAILABLE_RETRY_DELAY_MS = 2_000;

const UNAVAILABLE_STATUSES = new Set(['502', '503', '504']);
/** containerd's other form, for a read: `unexpected status code <url>: 503 Service Unavailable`. */
const UNEXPECTED_STATUS_CODE = /unexpected status code \S+: (\d{3})\b/g;

/**
 * The registry's answer that it is unavailable for a moment (502, 503 or 504) that the failure of
 * `output` (one try's CLI output) ends on, as a short phrase for the log; undefined when its
 * failure lines (`ERROR: ...`) show none, or any other refused request besides (a real refusal
 * makes the failure real). BuildKit's own earlier tries (`error: ... 503 ...`, `retrying in 1s`)
 * are not the failure: a push that got through them and failed otherwise is not pushed again.
 */
export function registryUnavailable(output: string): string | undefined {
  const failure = output
    .split('\n')
    .filter((line) => line.includes('ERROR:'))
    .join('\n');
  const statuses = [
    ...[...failure.matchAll(UNEXPECTED_STATUS)].map((m) => m[3] ?? ''),
    ...[...failure.matchAll(UNEXPECTED_STATUS_CODE)].map((m) => m[1] ?? ''),
  ];
  if (statuses.length === 0 || !statuses.every((status) => UNAVAILABLE_STATUSES.has(status)))
    return undefined;
  return `${statuses[statuses.length - 1] ?? ''} from the registry`;
}

/** Output kept per try, for concurrentPushRefusal (the tail only: the failure is at the end). */
const TAIL_CHARS = 64 * 1024;

/**
 * `log` as it is, also keeping the tail of what was written since the last `restart()` (masked or
 * not: it is only matched, never shown nor stored).
 */
export function tailingLog(log: CommandLogWriter): {
  readonly log: CommandLogWriter;
  tail(): string;
  restart(): void;
} {
  let tail = '';
  const decoder = new TextDecoder();
  const tailing: CommandLogWriter = {
    id: log.id,
    write(chunk) {
      tail += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
      if (tail.length > 2 * TAIL_CHARS) tail = tail.slice(-TAIL_CHARS);
      log.write(chunk);
    },
    addSecrets: (secrets) => log.addSecrets(secrets),
    close: () => log.close(),
  };
  return {
    log: tailing,
    tail: () => tail.slice(-TAIL_CHARS),
    restart: () => {
      tail = '';
    },
  };
}

/** Resolves after `ms`, or rejects with the signal's reason once it aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
