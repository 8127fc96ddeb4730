/**
 * `ibs build`: an async POST /build (Idempotency-Key: the request id, so a POST sent again after a
 * lost connection never starts a second build), the build watched (watch.ts) and its answer
 * long-polled (await-answer.ts), then on stdout and in GITHUB_OUTPUT. 429 and 503: wait Retry-After
 * plus jitter and try again until --timeout (retry.ts; after a 503, as a new attempt with a key of
 * its own); 401 and 403 exit 2 at once. Interrupted: DELETE the build. Exit codes: exit-codes.ts.
 */
import type { Values } from './args.js';
import { buildBody, requestIdOf, serverUrl, timeoutSeconds } from './build-request.js';
import { credentialsOf, githubOutputPath, type Env } from './env.js';
import { EXIT, exitForStatus, type ExitCode } from './exit-codes.js';
import { buildOutputs, writeGithubOutput } from './github-output.js';
import { Unreachable, call, jsonOf, sendsToken, type Answer } from './http.js';
import { isRefusal, refusalOf } from './identity.js';
import type { Terminal } from './output.js';
import { planRetry, retryAfterSeconds, UNAVAILABLE_RETRY_AFTER_SECONDS } from './retry.js';
import { cancelBuild } from './cancel.js';
import { answerOf, awaitAnswer } from './await-answer.js';
import { sleep } from './signals.js';
import { BuildWatch } from './watch.js';

export interface RunContext {
  readonly term: Terminal;
  readonly env: Env;
  /** Aborted on SIGINT/SIGTERM. */
  readonly interrupt: AbortSignal;
  readonly json: boolean;
}

/** Pause before a new attempt after a lost connection. */
const RECONNECT_MS = 2000;

/** Prints a failure (stderr; with --json also a JSON document on stdout) and returns its code. */
export function fail(
  ctx: RunContext,
  code: ExitCode,
  message: string,
  extra: Record<string, unknown> = {},
): ExitCode {
  ctx.term.err.line(`ibs: ${message}`);
  if (ctx.json) ctx.term.out.line(JSON.stringify({ error: message, exitCode: code, ...extra }));
  return code;
}

interface Attempt {
  readonly answer: Answer;
  readonly watch: BuildWatch;
}

/**
 * The build's place: its request id and, once accepted, its id. The Idempotency-Key is the request
 * id on the first attempt, `<request id>/<attempt>` on each attempt after a 503.
 */
interface Target {
  readonly server: URL;
  readonly requestId: string;
  id?: string;
  attempt: number;
  /** The builds of earlier attempts (answered 503): not the one watched. */
  readonly earlier: Set<string>;
}

const idempotencyKeyOf = (target: Target): string =>
  target.attempt === 1 ? target.requestId : `${target.requestId}/${target.attempt}`;

/** Statuses a front answers for a POST it could not pass on: asked again with the same key. */
const FRONT_STATUSES = new Set([502, 504]);

async function attempt(target: Target, body: string, ctx: RunContext): Promise<Attempt> {
  const watch = new BuildWatch(target.server, target.requestId, ctx.term.err, target.earlier);
  try {
    const answer = await call(new URL('build', target.server), {
      method: 'POST',
      headers: {
        'x-request-id': target.requestId,
        'idempotency-key': idempotencyKeyOf(target),
        prefer: 'respond-async',
      },
      body,
      signal: ctx.interrupt,
    });
    return { answer, watch };
  } catch (err) {
    watch.cancel();
    throw err;
  }
}

/**
 * POST /build until it is answered: a lost connection or a front's 502/504 is sent again with the
 * same Idempotency-Key (the service attaches it to the build it may have started: never a second
 * one) while --timeout allows. Undefined: interrupted, or an exit code.
 */
async function post(
  target: Target,
  body: string,
  ctx: RunContext,
  deadline: number,
): Promise<Attempt | ExitCode | undefined> {
  for (let tries = 1; ; tries++) {
    let why: string;
    try {
      const outcome = await attempt(target, body, ctx);
      if (!FRONT_STATUSES.has(outcome.answer.status)) return outcome;
      outcome.watch.cancel();
      why = `the front answered ${outcome.answer.status}`;
    } catch (err) {
      if (ctx.interrupt.aborted) return undefined;
      if (!(err instanceof Unreachable)) throw err;
      if (tries === 1 && !err.connected) return fail(ctx, EXIT.unreachable, err.message);
      why = err.message;
    }
    if (Date.now() + RECONNECT_MS >= deadline)
      return fail(ctx, EXIT.unreachable, `${why}; --timeout ran out`);
    ctx.term.err.line(`ibs: ${why}; sending it again in ${RECONNECT_MS / 1000} s (same Idempotency-Key)`);
    await sleep(RECONNECT_MS, ctx.interrupt);
    if (ctx.interrupt.aborted) return undefined;
  }
}

/** An accepted build (202): its answer once the long polls bring it. */
async function accepted(
  target: Target,
  outcome: Attempt,
  ctx: RunContext,
  outageMs: number,
): Promise<Attempt | ExitCode | undefined> {
  const record = jsonOf(outcome.answer);
  const id = typeof record?.id === 'string' ? record.id : undefined;
  if (id === undefined) {
    outcome.watch.cancel();
    return fail(ctx, EXIT.unreachable, 'the 202 answer names no build id');
  }
  target.id = id;
  ctx.term.err.line(`==> accepted: build ${id}`);
  const done = answerOf(record);
  if (done !== undefined) return { answer: done, watch: outcome.watch };
  const awaited = await awaitAnswer({
    server: target.server,
    id,
    sink: ctx.term.err,
    interrupt: ctx.interrupt,
    outageMs,
  });
  if (awaited.kind === 'answer') return { answer: awaited.answer, watch: outcome.watch };
  outcome.watch.cancel();
  if (awaited.kind === 'interrupted') return undefined;
  if (awaited.kind === 'refused') return refused(ctx, `GET /builds/${id}`, awaited.answer, target.server);
  return fail(ctx, EXIT.unreachable, awaited.message);
}

async function succeeded(ctx: RunContext, { answer, watch }: Attempt): Promise<ExitCode> {
  const result = jsonOf(answer) ?? {};
  const logIds = [result.gitCloneLogId, result.imageBuildLogId].filter((id) => typeof id === 'string');
  await watch.finish(logIds);
  ctx.term.err.line(
    `==> pushed ${String(result.image)}${typeof result.digest === 'string' ? ` (${result.digest})` : ''}`,
  );
  ctx.term.out.line(answer.text.trim());
  const path = githubOutputPath(ctx.env);
  if (path !== undefined) {
    const outputs = Object.entries(buildOutputs(result)).map(([key, value]) => [key, ctx.term.mask(value)]);
    await writeGithubOutput(path, Object.fromEntries(outputs) as Record<string, string>);
  }
  return EXIT.ok;
}

/** A 401 or 403 (of the POST or of a poll): exit 2 with the service's reason, never retried. */
function refused(ctx: RunContext, what: string, answer: Answer, server: URL): ExitCode {
  return fail(ctx, EXIT.refused, refusalOf(what, answer, sendsToken(server)), { status: answer.status });
}

async function failed(ctx: RunContext, { answer, watch }: Attempt, server: URL): Promise<ExitCode> {
  if (isRefusal(answer.status)) {
    watch.cancel();
    return refused(ctx, 'POST /build', answer, server);
  }
  const body = jsonOf(answer) ?? {};
  const error = typeof body.error === 'string' ? body.error : answer.text.slice(0, 500);
  const logId = typeof body.logId === 'string' ? body.logId : undefined;
  const code = exitForStatus(answer.status);
  if (code !== EXIT.failed) {
    watch.cancel();
    const what = code === EXIT.refused ? 'the request was refused' : 'unexpected answer';
    return fail(ctx, code, `${what} (${answer.status}): ${error}`, { status: answer.status });
  }
  await watch.finish(logId === undefined ? [] : [logId]);
  if (logId !== undefined) {
    const tail = watch.log(logId).tail;
    ctx.term.err.line(`==> the last ${tail.length} lines of ${logId}:`);
    ctx.term.err.write(tail.map((line) => `  ${line}\n`).join(''));
  }
  return fail(ctx, code, `the build failed (${answer.status}): ${error}`, { status: 500, logId });
}

export async function runBuild(values: Values, ctx: RunContext): Promise<ExitCode> {
  const server = serverUrl(values.server);
  const timeout = timeoutSeconds(values.timeout);
  const target: Target = {
    server,
    requestId: requestIdOf(values['request-id'], () => crypto.randomUUID()),
    attempt: 1,
    earlier: new Set(),
  };
  const body = JSON.stringify(
    buildBody(values, credentialsOf(ctx.env, values.registry as string | undefined)),
  );
  const deadline = Date.now() + timeout * 1000;
  for (let tries = 1; ; tries++) {
    ctx.term.err.line(`==> POST ${new URL('build', server).href} (request id ${target.requestId})`);
    let outcome = await post(target, body, ctx, deadline);
    if (outcome !== undefined && typeof outcome !== 'number' && outcome.answer.status === 202)
      outcome = await accepted(target, outcome, ctx, timeout * 1000);
    if (outcome === undefined) return interrupted(ctx, target);
    if (typeof outcome === 'number') return outcome;
    if (outcome.answer.status === 200) return succeeded(ctx, outcome);
    if (!RETRIED.has(outcome.answer.status)) return failed(ctx, outcome, server);
    outcome.watch.cancel();
    const wait = await waitToRetry(ctx, outcome.answer, deadline, tries);
    if (wait === 'interrupted') return interrupted(ctx, target);
    if (wait !== undefined) return wait;
    if (outcome.answer.status === 503) nextAttempt(target);
  }
}

/** Answers waited on and sent again: busy (429), and not built for a moment (503). */
const RETRIED = new Set([429, 503]);

/**
 * After a 503 (the shared store restarting, no builder of a platform up, a replica lost before the
 * build started): a new attempt, with a key of its own (the earlier key stays with the build that
 * answered 503, and would attach to it again).
 */
function nextAttempt(target: Target): void {
  if (target.id !== undefined) target.earlier.add(target.id);
  target.id = undefined;
  target.attempt += 1;
}

/**
 * A 429 or a 503: waits (undefined: try again) or gives the exit code (still busy or unavailable
 * past --timeout, interrupted). A 503 read from a build's record carries no Retry-After: the
 * store's 10 s then.
 */
async function waitToRetry(
  ctx: RunContext,
  answer: Answer,
  deadline: number,
  tries: number,
): Promise<ExitCode | 'interrupted' | undefined> {
  const { status } = answer;
  const header = answer.headers['retry-after'];
  const fallback = status === 503 ? UNAVAILABLE_RETRY_AFTER_SECONDS : undefined;
  const retryAfter = retryAfterSeconds(Array.isArray(header) ? header[0] : header, Date.now(), fallback);
  const plan = planRetry(retryAfter, Date.now(), deadline, Math.random);
  const what = status === 503 ? 'unavailable' : 'busy';
  if (!plan.retry) {
    const error = status === 503 ? `: ${String(jsonOf(answer)?.error ?? answer.text.slice(0, 500))}` : '';
    return fail(
      ctx,
      exitForStatus(status),
      `the server is still ${what} (${status}, Retry-After ${retryAfter} s) and --timeout runs out first${error}`,
      { status, retryAfter },
    );
  }
  ctx.term.err.line(
    `ibs: the server is ${what} (${status}) and asked to retry after ${retryAfter} s: waiting ${(plan.waitMs / 1000).toFixed(1)} s (try ${tries})`,
  );
  await sleep(plan.waitMs, ctx.interrupt);
  return ctx.interrupt.aborted ? 'interrupted' : undefined;
}

/** Ctrl-C or SIGTERM: the build is cancelled on the service (DELETE), then exit 130. */
async function interrupted(ctx: RunContext, target: Target): Promise<ExitCode> {
  await cancelBuild(target.server, target.id, target.requestId, ctx.term.err);
  return fail(ctx, EXIT.interrupted, 'interrupted');
}
