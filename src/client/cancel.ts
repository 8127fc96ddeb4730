/**
 * What Ctrl-C or SIGTERM does to `ibs build`: `DELETE /builds/{id}` cancels the build on the
 * service (an async build outlives its connection, so ending the request alone would not). When
 * ibs was interrupted before it learned the id, the running build of its request id is looked up.
 */
import { call, jsonOf, answerReason, sendsToken } from './http.js';
import { isRefusal, refusalOf } from './identity.js';
import type { Sink } from './output.js';

/** The cancel gets this long (each call) before ibs exits anyway. */
const CANCEL_MS = 10_000;

async function runningIdOf(server: URL, requestId: string): Promise<string | undefined> {
  const url = new URL(`builds?requestId=${encodeURIComponent(requestId)}&status=running`, server);
  const answer = await call(url, { idleMs: CANCEL_MS });
  const builds = answer.status === 200 ? jsonOf(answer)?.builds : undefined;
  const first = Array.isArray(builds) ? (builds[0] as Record<string, unknown> | undefined) : undefined;
  return typeof first?.id === 'string' ? first.id : undefined;
}

/** Cancels the build (its id, else the running build of `requestId`); says what happened. */
export async function cancelBuild(
  server: URL,
  id: string | undefined,
  requestId: string,
  sink: Sink,
): Promise<void> {
  try {
    const target = id ?? (await runningIdOf(server, requestId));
    if (target === undefined) return sink.line('ibs: no running build of this request to cancel');
    const what = `DELETE /builds/${target}`;
    const answer = await call(new URL(`builds/${encodeURIComponent(target)}`, server), {
      method: 'DELETE',
      idleMs: CANCEL_MS,
    });
    if (answer.status >= 200 && answer.status < 300) sink.line(`==> cancelled build ${target}`);
    else if (answer.status === 409) sink.line(`ibs: build ${target} had already finished`);
    else if (isRefusal(answer.status)) sink.line(`ibs: ${refusalOf(what, answer, sendsToken(server))}`);
    else sink.line(`ibs: ${what} answered ${answer.status}: ${answerReason(answer)}`);
  } catch (err) {
    sink.line(`ibs: could not cancel the build: ${(err as Error).message}`);
  }
}
