/**
 * The Dev Containers CLI, started with the job (before the clone; with reuse on, before the checkout,
 * so that an unchanged push answered from the trees never starts it) through devcontainer-launcher.cjs:
 * node's start-up and the CLI bundle's read and compile overlap git, and buildAndPush hands it its
 * args and env on stdin. A job that never builds (clone failure, reuse answer, follow, bad definition)
 * discards it: its stdin closes and its process group ends. Through runDeferred (src/exec/run.ts):
 * the process group is tracked, the job's signal and the build timeout apply as to any command.
 */
import { fileURLToPath } from 'node:url';
import { runDeferred, type CommandResult, type DeferredStart } from '../../src/exec/run.js';
import type { CommandLogWriter } from '../../src/logs/types.js';
import type { BuildConfig, StepDeps } from '../common/step-deps.js';

/** The launcher script, beside this module (copied to dist/ by the build). */
const LAUNCHER = fileURLToPath(new URL('./devcontainer-launcher.cjs', import.meta.url));

export interface PendingCli {
  /** Runs the CLI with `args` and `env` (added to config.childEnv); then as run(). Once, before any discard(). */
  run(
    args: readonly string[],
    env: Readonly<Record<string, string>>,
    output: { readonly log: CommandLogWriter; readonly display: DeferredStart['display'] },
  ): Promise<CommandResult>;
  /** Ends it unused (once it ran: nothing to do); resolves when its process is gone. */
  discard(): Promise<void>;
}

export function startPendingCli(
  deps: Pick<StepDeps, 'groups' | 'devcontainerCli'> & {
    readonly config: Pick<BuildConfig, 'childEnv'> & {
      readonly build: Pick<BuildConfig['build'], 'timeoutSeconds'>;
    };
  },
  options: { readonly signal: AbortSignal; readonly secrets: readonly string[] },
): PendingCli {
  let settle: (start: DeferredStart | undefined) => void = () => undefined;
  const start = new Promise<DeferredStart | undefined>((resolve) => {
    settle = resolve;
  });
  const running = runDeferred(
    process.execPath,
    [LAUNCHER, deps.devcontainerCli],
    {
      baseEnv: deps.config.childEnv,
      signal: options.signal,
      groups: deps.groups,
      secrets: options.secrets,
      timeoutSeconds: deps.config.build.timeoutSeconds,
    },
    start,
  );
  // Awaited by run() or discard(); never an unhandled rejection meanwhile.
  running.catch(() => undefined);
  return {
    async run(args, env, output) {
      settle({ stdin: `${JSON.stringify({ args, env })}\n`, log: output.log, display: output.display });
      const result = await running;
      // A programming error: run() after discard().
      if (result === undefined) throw new Error('the pending CLI was discarded before it ran');
      return result;
    },
    async discard() {
      settle(undefined);
      await running.catch(() => undefined);
    },
  };
}
