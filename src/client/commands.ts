/**
 * The thin commands: `image exists|delete`, `devcontainer` and `logs`, each one call with the
 * same server, credential and exit-code rules as `ibs build` (registry credentials from the
 * environment go in the X-Registry-* headers, never in argv; the bearer token is http.ts's).
 */
import { UsageError, type Values } from './args.js';
import { serverUrl } from './build-request.js';
import { fail, type RunContext } from './build.js';
import { credentialsOf } from './env.js';
import { EXIT, exitForStatus, type ExitCode } from './exit-codes.js';
import { Unreachable, call, jsonOf, answerReason, sendsToken, type Answer } from './http.js';
import { isRefusal, refusalOf } from './identity.js';
import { LogStream } from './log-stream.js';

const HOOKS = [
  'onCreateCommand',
  'updateContentCommand',
  'postCreateCommand',
  'postStartCommand',
  'postAttachCommand',
];

function imageQuery(values: Values): URLSearchParams {
  const query = new URLSearchParams();
  for (const key of ['registry', 'name', 'tag'] as const) {
    const value = values[key];
    if (typeof value !== 'string' || value === '') throw new UsageError(`--${key} is required`);
    query.set(key, value);
  }
  return query;
}

function registryHeaders(values: Values, ctx: RunContext): Record<string, string> {
  const registry = credentialsOf(ctx.env, values.registry as string | undefined).registry;
  if (registry === undefined || registry.registry !== values.registry) return {};
  return { 'x-registry-username': registry.username, 'x-registry-password': registry.password };
}

/** One call; a non-2xx answer is printed and mapped to its exit code. */
async function request(url: URL, ctx: RunContext, method = 'GET', headers: Record<string, string> = {}) {
  try {
    const answer = await call(url, { method, headers, signal: ctx.interrupt });
    if (answer.status >= 200 && answer.status < 300) return answer;
    const what = `${method} ${url.pathname}`;
    const message = isRefusal(answer.status)
      ? refusalOf(what, answer, sendsToken(url))
      : `${what} answered ${answer.status}: ${answerReason(answer)}`;
    return fail(ctx, exitForStatus(answer.status), message, { status: answer.status });
  } catch (err) {
    if (ctx.interrupt.aborted) return fail(ctx, EXIT.interrupted, 'interrupted');
    if (err instanceof Unreachable) return fail(ctx, EXIT.unreachable, err.message);
    throw err;
  }
}

export async function runImage(
  values: Values,
  ctx: RunContext,
  verb: 'exists' | 'delete',
): Promise<ExitCode> {
  const url = new URL(`image?${imageQuery(values)}`, serverUrl(values.server));
  const answer = await request(url, ctx, verb === 'exists' ? 'GET' : 'DELETE', registryHeaders(values, ctx));
  if (typeof answer === 'number') return answer;
  const body = jsonOf(answer) ?? {};
  if (ctx.json) ctx.term.out.line(answer.text.trim());
  if (verb === 'exists') {
    if (!ctx.json) ctx.term.out.line(body.exists === true ? 'exists' : 'absent');
    return body.exists === true ? EXIT.ok : EXIT.failed;
  }
  if (!ctx.json)
    ctx.term.out.line(`${body.deleted === true ? 'deleted' : 'not deleted'}: ${String(body.reason)}`);
  return EXIT.ok;
}

export async function runDevcontainer(values: Values, ctx: RunContext): Promise<ExitCode> {
  const query = imageQuery(values);
  const platform = Array.isArray(values.platform) ? values.platform : [];
  if (platform.length > 1) throw new UsageError('devcontainer reads one --platform');
  if (platform[0] !== undefined) query.set('platform', platform[0]);
  const hook = values.script;
  if (typeof hook === 'string' && !HOOKS.includes(hook))
    throw new UsageError(`--script: one of ${HOOKS.join(', ')}`);
  const answer: Answer | ExitCode = await request(
    new URL(`devcontainer?${query}`, serverUrl(values.server)),
    ctx,
    'GET',
    registryHeaders(values, ctx),
  );
  if (typeof answer === 'number') return answer;
  const body = jsonOf(answer) ?? {};
  if (typeof hook === 'string') {
    const script = (body.lifecycleScripts as Record<string, unknown> | undefined)?.[hook];
    if (ctx.json) ctx.term.out.line(JSON.stringify({ hook, script: script ?? null }));
    else if (typeof script === 'string') ctx.term.out.write(script.endsWith('\n') ? script : `${script}\n`);
    return typeof script === 'string' ? EXIT.ok : fail(ctx, EXIT.failed, `nothing sets ${hook}`);
  }
  ctx.term.out.line(ctx.json ? answer.text.trim() : JSON.stringify(body.configuration, null, 2));
  return EXIT.ok;
}

export async function runLogs(values: Values, positionals: string[], ctx: RunContext): Promise<ExitCode> {
  const [id, ...extra] = positionals;
  if (id === undefined || extra.length > 0) throw new UsageError('ibs logs takes one log id');
  const server = serverUrl(values.server);
  if (values.follow === true && !ctx.json) {
    const stream = new LogStream(server, id, '', ctx.term.out, ctx.term.err);
    ctx.interrupt.addEventListener('abort', () => stream.stop(), { once: true });
    await stream.done;
    if (ctx.interrupt.aborted) return EXIT.interrupted;
    // An answer other than 200 was said on stderr by the stream; its exit code is the table's.
    return stream.refused === undefined ? EXIT.ok : exitForStatus(stream.refused.status);
  }
  const answer = await request(new URL(`logs/${encodeURIComponent(id)}`, server), ctx);
  if (typeof answer === 'number') return answer;
  if (ctx.json) {
    ctx.term.out.line(
      JSON.stringify({ id, complete: answer.headers['x-log-complete'] === 'true', text: answer.text }),
    );
  } else ctx.term.out.write(answer.text);
  return EXIT.ok;
}
