/**
 * `ibs build`: POST /build while watching the build (watch.ts), then the answer on stdout and in
 * GITHUB_OUTPUT. 429: wait Retry-After plus jitter and try again until --timeout (retry.ts).
 * A lost connection: the service cancels a build whose client went away, so a new attempt is
 * made only while --timeout allows. Exit codes: exit-codes.ts.
 */
import type { Values } from './args.js';
import { buildBody, requestIdOf, serverUrl, timeoutSeconds } from './build-request.js';
import { credentialsOf, githubOutputPath, type Env } from './env.js';
import { EXIT, exitForStatus, type ExitCode } from './exit-codes.js';
import { buildOutputs, writeGithubOutput } from './github-output.js';
import { Unreachable, call, jsonOf, type Answer } from './http.js';
import type { Terminal } from './output.js';
import { planRetry, retryAfterSeconds } from './retry.js';
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

async function attempt(server: URL, requestId: string, body: string, ctx: RunContext): Promise<Attempt> {
  const watch = new BuildWatch(server, requestId, ctx.term.err);
  try {
    const answer = await call(new URL('build', server), {
      method: 'POST',
      headers: { 'x-request-id': requestId },
      body,
      signal: ctx.interrupt,
    });
    return { answer, watch };
  } catch (err) {
    watch.cancel();
    throw err;
  }
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
  if (path !== undefined) await writeGithubOutput(path, buildOutputs(result));
  return EXIT.ok;
}

async function failed(ctx: RunContext, { answer, watch }: Attempt): Promise<ExitCode> {
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
  const requestId = requestIdOf(values['request-id'], () => crypto.randomUUID());
  const body = JSON.stringify(
    buildBody(values, credentialsOf(ctx.env, values.registry as string | undefined)),
  );
  const deadline = Date.now() + timeout * 1000;
  let id = requestId;
  for (let tries = 1, lost = 0; ; tries++) {
    ctx.term.err.line(`==> POST ${new URL('build', server).href} (request id ${id})`);
    let outcome: Attempt;
    try {
      outcome = await attempt(server, id, body, ctx);
    } catch (err) {
      if (ctx.interrupt.aborted) return interrupted(ctx);
      if (!(err instanceof Unreachable)) throw err;
      if (tries === 1 && !err.connected) return fail(ctx, EXIT.unreachable, err.message);
      if (err.connected)
        ctx.term.err.line(`ibs: ${err.message}; the service cancels a build whose client went away`);
      if (Date.now() + RECONNECT_MS >= deadline)
        return fail(ctx, EXIT.unreachable, `${err.message}; --timeout ran out`);
      if (err.connected) id = `${requestId}.${++lost + 1}`;
      ctx.term.err.line(`ibs: trying again in ${RECONNECT_MS / 1000} s (--timeout allows it)`);
      await sleep(RECONNECT_MS, ctx.interrupt);
      if (ctx.interrupt.aborted) return interrupted(ctx);
      continue;
    }
    if (outcome.answer.status === 200) return succeeded(ctx, outcome);
    if (outcome.answer.status !== 429) return failed(ctx, outcome);
    outcome.watch.cancel();
    const wait = await waitWhileBusy(ctx, outcome.answer, deadline, tries);
    if (wait !== undefined) return wait;
  }
}

/** A 429: waits (undefined: try again) or gives the exit code (busy past --timeout, interrupted). */
async function waitWhileBusy(
  ctx: RunContext,
  answer: Answer,
  deadline: number,
  tries: number,
): Promise<ExitCode | undefined> {
  const header = answer.headers['retry-after'];
  const retryAfter = retryAfterSeconds(Array.isArray(header) ? header[0] : header, Date.now());
  const plan = planRetry(retryAfter, Date.now(), deadline, Math.random);
  if (!plan.retry) {
    return fail(
      ctx,
      EXIT.busy,
      `the server is still busy (429, Retry-After ${retryAfter} s) and --timeout runs out first`,
      {
        status: 429,
        retryAfter,
      },
    );
  }
  ctx.term.err.line(
    `ibs: the server is busy (429) and asked to retry after ${retryAfter} s: waiting ${(plan.waitMs / 1000).toFixed(1)} s (try ${tries})`,
  );
  await sleep(plan.waitMs, ctx.interrupt);
  return ctx.interrupt.aborted ? interrupted(ctx) : undefined;
}

export function interrupted(ctx: RunContext): ExitCode {
  return fail(
    ctx,
    EXIT.interrupted,
    'interrupted: the request is ended, which cancels the build on the server',
  );
}
