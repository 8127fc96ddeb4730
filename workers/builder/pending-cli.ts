/**
 * The Dev Containers CLI, started with the job (before the clone) through cli-launcher.cjs: node's
 * start-up and the CLI bundle's read and compile overlap git, and buildAndPush hands it its args
 * and env on stdin. A job that never builds (clone failure, reuse answer, follow, bad definition)
 * discards it: its stdin closes and its process group ends. Through runDeferred (src/exec/run.ts):
 * the process group is tracked, the job's signal and the build timeout apply as to any command.
 */
import { fileURLToPath } from 'node:url';
import { runDeferred, type CommandResult, type DeferredStart } from '../../src/exec/run.js';
import type { CommandLogWriter } from '../../src/logs/types.js';
import type { BuildConfig, BuildDeps } from '../build-deps.js';

/** The launcher script, beside this module (copied to dist/ by the build). */
const LAUNCHER = fileURLToPath(new URL('./cli-launcher.cjs', import.meta.url));

export interface PendingCli {
  /** Runs the CLI with `args` and `env` (added to config.childEnv); then as run(). Once only. */
  run(
    args: readonly string[],
    env: Readonly<Record<string, string>>,
    output: { readonly log: CommandLogWriter; readonly display: DeferredStart['display'] },
  ): Promise<CommandResult>;
  /** Ends it unused (no-op once run); resolves when its process is gone. */
  discard(): Promise<void>;
}

export function startPendingCli(
  deps: Pick<BuildDeps, 'groups' | 'devcontainerCli'> & {
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
  let used = false;
  return {
    async run(args, env, output) {
      if (used) throw new Error('the pending CLI was already run or discarded');
      used = true;
      settle({ stdin: `${JSON.stringify({ args, env })}\n`, log: output.log, display: output.display });
      const result = await running;
      if (result === undefined) throw new Error('unreachable: a started CLI was discarded');
      return result;
    },
    async discard() {
      if (used) return;
      used = true;
      settle(undefined);
      await running.catch(() => undefined);
    },
  };
}
