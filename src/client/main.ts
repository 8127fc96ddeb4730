#!/usr/bin/env node
/**
 * `ibs`, the CI client of the image build service (docs/ci.md): parses the command line with the
 * argument table, gets its identity (identity.ts: the bearer token of every request), runs the
 * command, flushes its output and exits with the code of exit-codes.ts. It imports nothing of the
 * service: it stands alone.
 */
import { parseCommandLine, UsageError, type Parsed } from './args.js';
import { serverUrl } from './build-request.js';
import { runBuild, fail, type RunContext } from './build.js';
import { credentialsOf, processEnv, secretsOf } from './env.js';
import { EXIT, type ExitCode } from './exit-codes.js';
import { authorize, closeConnections } from './http.js';
import { IdentityError, identityOf, identitySecretsOf } from './identity.js';
import { Masks } from './mask.js';
import { terminal } from './output.js';
import { interruptSignal } from './signals.js';
import { PACKAGE_NAME, packageVersion } from './version.js';

function secretsOfEnv(env: ReturnType<typeof processEnv>): ReturnType<typeof secretsOf> {
  try {
    return secretsOf(credentialsOf(env, env.IBS_REGISTRY || 'registry'));
  } catch {
    // Half-given credentials are refused later; mask whatever was given.
    const values = [env.IBS_GIT_TOKEN, env.IBS_REGISTRY_PASSWORD].filter((v): v is string => Boolean(v));
    return values.map((value) => ({ value }));
  }
}

/** Sends the environment's token (if any) to the service from now on; fetches an ID token first. */
async function identify(server: URL, ctx: RunContext, masks: Masks): Promise<void> {
  const identity = identityOf(ctx.env, (token) => masks.add({ value: token }));
  if (identity === undefined) return;
  await identity.token();
  authorize(server, () => identity.token());
}

/** Runs the command; a refusal (usage, identity) is told as the parsed `--json` asks. */
async function run(argv: string[], ctx: RunContext, masks: Masks): Promise<ExitCode> {
  const parsed = parseCommandLine(argv, ctx.env);
  if (parsed.kind === 'help') {
    ctx.term.out.write(`${PACKAGE_NAME} ${packageVersion()}\n${parsed.text}`);
    return EXIT.ok;
  }
  const run = { ...ctx, json: parsed.values.json === true };
  try {
    return await runCommand(parsed, run, masks);
  } catch (err) {
    if (!(err instanceof UsageError || err instanceof IdentityError)) throw err;
    return fail(run, EXIT.refused, err.message);
  }
}

async function runCommand(
  parsed: Extract<Parsed, { kind: 'run' }>,
  run: RunContext,
  masks: Masks,
): Promise<ExitCode> {
  await identify(serverUrl(parsed.values.server), run, masks);
  if (parsed.command === 'build') return runBuild(parsed.values, run);
  // The thin commands are loaded only when asked for (start-up time of every build step).
  const { runDevcontainer, runImage, runLogs } = await import('./commands.js');
  switch (parsed.command) {
    case 'image exists':
      return runImage(parsed.values, run, 'exists');
    case 'image delete':
      return runImage(parsed.values, run, 'delete');
    case 'devcontainer':
      return runDevcontainer(parsed.values, run);
    case 'logs':
      return runLogs(parsed.values, parsed.positionals, run);
  }
}

async function main(): Promise<void> {
  const env = processEnv();
  const masks = new Masks([...secretsOfEnv(env), ...identitySecretsOf(env).map((value) => ({ value }))]);
  const term = terminal(masks.mask);
  const ctx: RunContext = { term, env, interrupt: interruptSignal(), json: false };
  let code: ExitCode;
  try {
    code = await run(process.argv.slice(2), ctx, masks);
  } catch (err) {
    // A command line that does not parse: its --json read leniently (args.ts).
    if (!(err instanceof UsageError)) throw err;
    code = fail({ ...ctx, json: err.json }, EXIT.refused, err.message);
  }
  closeConnections();
  await term.out.flush();
  await term.err.flush();
  process.exit(code);
}

await main();
