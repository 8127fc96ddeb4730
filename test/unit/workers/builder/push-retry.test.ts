/**
 * Which failed pushes are pushed again (workers/builder/push-retry.ts): the refusals a concurrent
 * push of the same content gets, and a registry unavailable for a moment, from the CLI's real
 * output lines, and never a real refusal.
 */
import test from 'ava';
import {
  concurrentPushRefusal,
  pause,
  registryUnavailable,
  tailingLog,
} from '../../../../workers/builder/push-retry.js';
import type { CommandLogWriter } from '../../../../src/logs/types.js';

const REF = 'localhost:45000/demo:burst3';
const URL_BASE = 'http://localhost:45000/v2/demo';
const DIGEST = `sha256:${'af'.repeat(32)}`;
const failed = (detail: string): string =>
  `#6 ERROR: failed to push ${REF}: ${detail}\n------\nERROR: failed to solve: failed to push ${REF}: ${detail}\n`;
const status = (method: string, url: string, code: string): string =>
  `failed commit on ref "manifest-${DIGEST}": unexpected status from ${method} request to ${url}: ${code}`;

test('a 400 or 404 on a manifest PUT is a concurrent push of the same content', (t) => {
  t.is(
    concurrentPushRefusal(failed(status('PUT', `${URL_BASE}/manifests/${DIGEST}`, '400 Bad Request'))),
    '400 on a manifest PUT',
  );
  t.is(
    concurrentPushRefusal(failed(status('PUT', `${URL_BASE}/manifests/burst3`, '404 Not Found'))),
    '404 on a manifest PUT',
  );
  t.is(
    concurrentPushRefusal(
      failed(status('PUT', `${URL_BASE}/blobs/uploads/5f1c?_state=x&digest=${DIGEST}`, '404 Not Found')),
    ),
    '404 on a blob upload',
  );
  t.is(
    concurrentPushRefusal(`ERROR: failed to solve: image "${REF}": already exists\n`),
    "the builder's image store: the image name already exists",
  );
});

test('a registry unavailable for a moment (502, 503, 504) is pushed to again; never with a real refusal', (t) => {
  t.is(
    registryUnavailable(failed(status('HEAD', `${URL_BASE}/blobs/${DIGEST}`, '503 Service Unavailable'))),
    '503 from the registry',
  );
  t.is(
    registryUnavailable(failed(status('PUT', `${URL_BASE}/manifests/burst3`, '502 Bad Gateway'))),
    '502 from the registry',
  );
  t.is(
    registryUnavailable(
      failed(
        `httpReadSeeker: failed open: unexpected status code ${URL_BASE}/blobs/${DIGEST}: 504 Gateway Timeout`,
      ),
    ),
    '504 from the registry',
  );
  for (const code of [
    '401 Unauthorized',
    '403 Forbidden',
    '429 Too Many Requests',
    '500 Internal Server Error',
  ])
    t.is(
      registryUnavailable(failed(status('PUT', `${URL_BASE}/manifests/${DIGEST}`, code))),
      undefined,
      code,
    );
  const both =
    failed(status('HEAD', `${URL_BASE}/blobs/${DIGEST}`, '503 Service Unavailable')) +
    failed(status('PUT', `${URL_BASE}/manifests/burst3`, '403 Forbidden'));
  t.is(registryUnavailable(both), undefined);
  // BuildKit's own earlier tries that got through, then a failure of another kind: not pushed again.
  const through =
    `#6 1.1 error: ${status('PUT', `${URL_BASE}/manifests/${DIGEST}`, '503 Service Unavailable')}\n` +
    '#6 1.1 retrying in 1s\n' +
    `ERROR: failed to solve: image "${REF}": already exists\n`;
  t.is(registryUnavailable(through), undefined);
  t.is(
    registryUnavailable('ERROR: failed to solve: process "/bin/sh -c false" did not complete successfully\n'),
    undefined,
  );
});

test('a real refusal, or any other failure, is never pushed again', (t) => {
  for (const code of [
    '401 Unauthorized',
    '403 Forbidden',
    '429 Too Many Requests',
    '500 Internal Server Error',
  ])
    t.is(
      concurrentPushRefusal(failed(status('PUT', `${URL_BASE}/manifests/${DIGEST}`, code))),
      undefined,
      code,
    );
  // A 400 on a blob upload (a digest the registry found wrong) and a refused HEAD are real.
  t.is(
    concurrentPushRefusal(failed(status('PUT', `${URL_BASE}/blobs/uploads/5f1c`, '400 Bad Request'))),
    undefined,
  );
  t.is(
    concurrentPushRefusal(failed(status('POST', `${URL_BASE}/blobs/uploads/`, '404 Not Found'))),
    undefined,
  );
  // One real refusal among concurrent ones makes the failure real.
  const both =
    failed(status('PUT', `${URL_BASE}/manifests/${DIGEST}`, '400 Bad Request')) +
    failed(status('PUT', `${URL_BASE}/manifests/burst3`, '403 Forbidden'));
  t.is(concurrentPushRefusal(both), undefined);
  t.is(
    concurrentPushRefusal(
      'ERROR: failed to solve: process "/bin/sh -c false" did not complete successfully\n',
    ),
    undefined,
  );
  t.is(concurrentPushRefusal(''), undefined);
});

test('the tailing log passes everything on and keeps what was written since its restart', (t) => {
  const written: Array<string | Uint8Array> = [];
  const inner: CommandLogWriter = {
    id: 'img-1',
    write: (chunk) => written.push(chunk),
    addSecrets: () => undefined,
    close: async () => undefined,
  };
  const tailing = tailingLog(inner);
  tailing.log.write('first try\n');
  tailing.restart();
  tailing.log.write(new TextEncoder().encode('second '));
  tailing.log.write('try\n');
  t.is(tailing.tail(), 'second try\n');
  t.is(written.length, 3);
  t.is(tailing.log.id, 'img-1');
});

test('the pause between tries ends early when the build is cancelled', async (t) => {
  const controller = new AbortController();
  const started = Date.now();
  const paused = pause(60_000, controller.signal);
  controller.abort(new Error('cancelled'));
  await t.throwsAsync(paused, { message: 'cancelled' });
  t.true(Date.now() - started < 5_000);
  await pause(1, new AbortController().signal);
});
