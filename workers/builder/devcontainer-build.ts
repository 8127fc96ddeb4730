/**
 * `devcontainer build ... --push` through the remote builder, its output (and the builder's
 * setup) captured in an `img-*` log. The argv is pure (devcontainerBuildArgs); the CLI is the
 * pinned @devcontainers/cli package's own script, resolved from the package, run by this node.
 * Environment: config.childEnv plus BUILDX_BUILDER, the request's DOCKER_CONFIG, and HOME,
 * XDG dirs and TMPDIR inside the request's scratch directory, and the build secrets folder's path.
 */
import { imageLabels, type ImageOrigin } from '../../src/rules/image-labels.js';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { BuilderMode } from '../../src/rules/limits.js';
import type { BuildDefaults } from '../../src/config/types.js';
import { stepFailure } from '../../src/exec/failure.js';
import { CommandFailure, run } from '../../src/exec/run.js';
import type { CommandLogWriter } from '../../src/logs/types.js';
import { withSpan } from '../../src/observability/tracing.js';
import type { StepDeps } from '../common/step-deps.js';
import type { BuilderHandle } from './remote-builder.js';
import type { BuildPlan } from '../plan/plan-types.js';
import type { RequestDir } from '../common/request-dir.js';
import { saveCliCache, seedCliCache } from './cli-cache.js';
import { writeRequestDockerConfig } from './docker-config.js';
import type { PendingCli } from './pending-cli.js';
import {
  concurrentPushRefusal,
  pause,
  PUSH_RETRY_DELAY_MS,
  PUSH_TRIES,
  registryUnavailable,
  tailingLog,
  UNAVAILABLE_PUSH_TRIES,
  UNAVAILABLE_RETRY_DELAY_MS,
} from './push-retry.js';
import {
  KEYED_DIR_VAR,
  labelEnv,
  NODE_VAR,
  PLATFORMS_VAR,
  PROVENANCE_VAR,
  COMPRESSION_VAR,
  SBOM_VAR,
  SECRETS_DIR_VAR,
  SECRETS_IDENTITY_VAR,
  writeDockerWrapper,
} from './docker-wrapper.js';
import { writeSecretFiles } from './secret-files.js';

export interface DevcontainerBuildInput {
  readonly workspaceFolder: string;
  readonly configFile?: string;
  /** `<registry>/<name>:<tag>`. */
  readonly imageRef: string;
  /** [] = no --platform. */
  readonly platforms: readonly string[];
  readonly noCache: boolean;
  readonly cacheFrom?: string;
  readonly cacheTo?: string;
  readonly mode: BuilderMode;
  readonly omitSyntaxDirective: boolean;
  /** OCI labels, in order. */
  readonly labels: ReadonlyArray<readonly [string, string]>;
  /**
   * `--docker-path`: the wrapper of docker-wrapper.ts. With it, a multi-platform build gives
   * the CLI only the first platform and the wrapper hands buildx the full list.
   */
  readonly dockerPath?: string;
}

/** The arguments after `devcontainer` (pure). Every value comes after its own option. */
export function devcontainerBuildArgs(input: DevcontainerBuildInput): string[] {
  return [
    'build',
    ...(input.dockerPath === undefined ? [] : ['--docker-path', input.dockerPath]),
    '--workspace-folder',
    input.workspaceFolder,
    ...(input.configFile === undefined ? [] : ['--config', input.configFile]),
    '--image-name',
    input.imageRef,
    '--push',
    ...(input.omitSyntaxDirective ? ['--omit-syntax-directive'] : []),
    ...(input.platforms.length > 0
      ? [
          '--platform',
          input.dockerPath === undefined ? input.platforms.join(',') : (input.platforms[0] ?? ''),
        ]
      : []),
    ...(input.noCache ? ['--no-cache'] : []),
    ...(input.cacheFrom === undefined ? [] : ['--cache-from', input.cacheFrom]),
    ...(input.cacheTo === undefined ? [] : ['--cache-to', input.cacheTo]),
    '--buildkit',
    input.mode,
    ...input.labels.flatMap(([key, value]) => ['--label', `${key}=${value}`]),
  ];
}

/** The CLI's entry script, from the installed package (never looked up on PATH). */
export function devcontainerCliScript(): string {
  const require = createRequire(import.meta.url);
  const pkgFile = require.resolve('@devcontainers/cli/package.json');
  const pkg = require(pkgFile) as { bin?: string | Record<string, string> };
  const bin = typeof pkg.bin === 'string' ? pkg.bin : (pkg.bin?.devcontainer ?? 'devcontainer.js');
  return join(dirname(pkgFile), bin);
}

/**
 * The CLI's bundle, the module its entry script requires (the same program, run directly): what
 * the service runs, so that devcontainer-launcher.cjs can compile it ahead.
 */
export function devcontainerCliBundle(): string {
  return createRequire(import.meta.url).resolve('@devcontainers/cli/dist/spec-node/devContainersSpecCLI.js');
}

/** The pinned Dev Containers CLI's version (its package.json), a build key input. */
export function devcontainerCliVersion(): string {
  const require = createRequire(import.meta.url);
  const pkg = require('@devcontainers/cli/package.json') as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : 'unknown';
}

/**
 * Always on: without it the CLI writes `# syntax=docker/dockerfile:1.4` when it sees no Engine >= 23
 * (never, with a remote builder), and BuildKit then pulls a frontend image from Docker Hub. The
 * builder's built-in frontend supports everything the CLI generates.
 */
const OMIT_SYNTAX_DIRECTIVE = true;

/** The docker wrapper's attestation variables (`--provenance`, `--attest type=sbom`) of the configuration. */
function attestationEnv(
  build: Pick<BuildDefaults, 'provenance' | 'sbom' | 'sbomGenerator'>,
): Record<string, string> {
  const provenance = build.provenance === 'off' ? 'false' : `mode=${build.provenance}`;
  if (!build.sbom) return { [PROVENANCE_VAR]: provenance };
  const generator = build.sbomGenerator === undefined ? '' : `,generator=${build.sbomGenerator}`;
  return { [PROVENANCE_VAR]: provenance, [SBOM_VAR]: `type=sbom${generator}` };
}

export interface BuildAndPushOptions {
  plan: BuildPlan;
  deps: Pick<StepDeps, 'config' | 'logStore' | 'groups' | 'devcontainerCli'> & {
    readonly remoteBuilder: BuilderHandle;
  };
  dir: RequestDir;
  workspaceFolder: string;
  configFile?: string;
  /** The definition builds a Dockerfile: the CLI would drop the labels, so the docker wrapper adds them. */
  dockerfileBased: boolean;
  imageRef: string;
  /** Where the image comes from: its labels (src/rules/image-labels.ts). */
  origin: ImageOrigin;
  signal: AbortSignal;
  /** An `img` log the caller opened (and closes); else one is opened and closed here. */
  log?: CommandLogWriter;
  /** The CLI already started (pending-cli.ts); else it is started here. */
  cli?: PendingCli;
}

interface Prepared {
  readonly tmp: string;
  readonly dockerPath: string;
  readonly secretsDir?: string;
  /** The keyed identity of the secrets offered (secret-identity.ts). */
  readonly identity?: string;
}

/** The secrets' files and keyed identity; nothing when none is offered (the build is as without them). */
async function prepareSecrets(
  options: BuildAndPushOptions,
  log: CommandLogWriter,
): Promise<{ secretsDir?: string; identity?: string }> {
  const { plan, dir } = options;
  const secretsDir = await writeSecretFiles(dir.root, plan.buildSecrets);
  if (secretsDir === undefined) return {};
  log.write(`# build secrets offered: ${plan.buildSecrets.map((secret) => secret.id).join(', ')}\n`);
  // Computed once, as the build was admitted (build-flow.ts), and carried in the plan.
  const identity = plan.secretsIdentity;
  return { secretsDir, ...(identity === undefined ? {} : { identity }) };
}

/** The request's docker config, scratch TMPDIR, wrapper and build secret files, ready for the CLI. */
async function prepare(options: BuildAndPushOptions, log: CommandLogWriter): Promise<Prepared> {
  const { plan, deps, dir } = options;
  const { config } = deps;
  await deps.remoteBuilder.ensure({ log, home: dir.home, signal: options.signal });
  await writeRequestDockerConfig({
    dir: dir.dockerConfig,
    stateDir: config.dockerConfigDir,
    ambient: config.registryAuth,
    ...(plan.registryCredentials === undefined ? {} : { credentials: plan.registryCredentials }),
  });
  const tmp = join(dir.root, 'tmp');
  await mkdir(tmp, { mode: 0o700 });
  // Always: it adds the attestations the CLI cannot ask for (and works around its faults), and the
  // build secrets (only a Dockerfile can mount them: docs/secrets.md).
  const dockerPath = await writeDockerWrapper(dir.generated);
  const secrets = await prepareSecrets(options, log);
  await seedCliCache(tmp, config.scratchDir);
  return { tmp, dockerPath, ...secrets };
}

function cliArgs(options: BuildAndPushOptions, dockerPath: string | undefined): string[] {
  const { plan } = options;
  return devcontainerBuildArgs({
    workspaceFolder: options.workspaceFolder,
    ...(options.configFile === undefined ? {} : { configFile: options.configFile }),
    imageRef: options.imageRef,
    platforms: plan.platforms,
    noCache: plan.noCache,
    ...(plan.cacheFrom === undefined ? {} : { cacheFrom: plan.cacheFrom }),
    ...(plan.cacheTo === undefined ? {} : { cacheTo: plan.cacheTo }),
    mode: plan.mode,
    omitSyntaxDirective: OMIT_SYNTAX_DIRECTIVE,
    labels: Object.entries(imageLabels(options.origin)),
    ...(dockerPath === undefined ? {} : { dockerPath }),
  });
}

/** The CLI's environment: paths of this request only (the secrets folder's path, never a value). */
function cliEnv(options: BuildAndPushOptions, prepared: Prepared): Record<string, string> {
  const { plan, deps, dir } = options;
  return {
    ...(deps.remoteBuilder.name === undefined ? {} : { BUILDX_BUILDER: deps.remoteBuilder.name }),
    DOCKER_CONFIG: dir.dockerConfig,
    HOME: dir.home,
    XDG_CACHE_HOME: join(dir.home, '.cache'),
    XDG_CONFIG_HOME: join(dir.home, '.config'),
    TMPDIR: prepared.tmp,
    ...labelEnv(options.origin),
    ...(plan.platforms.length > 1 ? { [PLATFORMS_VAR]: plan.platforms.join(',') } : {}),
    ...attestationEnv(deps.config.build),
    [COMPRESSION_VAR]: plan.compression,
    ...(prepared.secretsDir === undefined ? {} : { [SECRETS_DIR_VAR]: prepared.secretsDir }),
    ...(prepared.identity === undefined
      ? {}
      : {
          [SECRETS_IDENTITY_VAR]: prepared.identity,
          [NODE_VAR]: process.execPath,
          [KEYED_DIR_VAR]: dir.generated,
        }),
  };
}

/**
 * Whether a failed try (its output's tail) is pushed again, after how long, and the img log line
 * saying why: a concurrent push's refusal (push-retry.ts), or a registry unavailable for a moment.
 */
function pushAgain(tail: string, attempt: number): { delayMs: number; line: string } | undefined {
  const tries = (n: number): string => `try ${String(attempt + 1)} of ${String(n)}`;
  const refusal = concurrentPushRefusal(tail);
  if (refusal !== undefined && attempt < PUSH_TRIES) {
    const delayMs = PUSH_RETRY_DELAY_MS * 2 ** (attempt - 1);
    const why = `the push was refused (${refusal}), as it is while an identical build pushes the same image`;
    return { delayMs, line: `${why}: pushing again in ${String(delayMs / 1000)} s (${tries(PUSH_TRIES)})` };
  }
  const outage = registryUnavailable(tail);
  if (outage !== undefined && attempt < UNAVAILABLE_PUSH_TRIES) {
    const delayMs = UNAVAILABLE_RETRY_DELAY_MS * 2 ** (attempt - 1);
    const why = `the registry is unavailable (${outage})`;
    return {
      delayMs,
      line: `${why}: pushing again in ${String(delayMs / 1000)} s (${tries(UNAVAILABLE_PUSH_TRIES)})`,
    };
  }
  return undefined;
}

/** How many times a build moves to another builder after losing its own mid-build. */
const BUILDER_MOVES = 2;

/**
 * After a try failed: whether the build's builder no longer answers and the build moved to the
 * next healthy builder in its order (fleet/build-placement.ts writes the img log line naming both).
 * A builder that still answers (the build failed of itself), or nowhere to go: false.
 */
async function movedOffLostBuilder(options: BuildAndPushOptions, log: CommandLogWriter): Promise<boolean> {
  const builder = options.deps.remoteBuilder;
  const before = builder.name;
  // What the check writes reaches the img log only when the builder was lost: a failure of the
  // build's own keeps its reason on the log's last line.
  const held: (string | Uint8Array)[] = [];
  const holding: CommandLogWriter = {
    id: log.id,
    write: (chunk) => void held.push(chunk),
    addSecrets: (secrets) => log.addSecrets(secrets),
    close: () => log.close(),
  };
  const flush = (): void => held.forEach((chunk) => log.write(chunk));
  try {
    await builder.ensure({ log: holding, home: options.dir.home, signal: options.signal });
  } catch {
    flush();
    return false;
  }
  if (builder.name === before) return false;
  flush();
  return true;
}

/**
 * Runs the CLI once per try (the pending CLI first, when there is one): a try that the registry
 * refused as it refuses a concurrent push of the same content (push-retry.ts) is run again, the
 * build then cached (a pure push), up to PUSH_TRIES in all; a try whose builder was lost meanwhile
 * runs again on the next healthy builder (up to BUILDER_MOVES times); any other failure ends it.
 */
async function runCliTries(
  options: BuildAndPushOptions,
  args: readonly string[],
  envOf: () => Record<string, string>,
  log: CommandLogWriter,
): Promise<void> {
  const { plan, deps } = options;
  const { config } = deps;
  const display = { command: 'devcontainer', args };
  const tailing = tailingLog(log);
  const startedAt = Date.now();
  let moves = 0;
  for (let attempt = 1; ; attempt++) {
    tailing.restart();
    const env = envOf();
    try {
      if (attempt === 1 && moves === 0 && options.cli !== undefined)
        await options.cli.run(args, env, { log: tailing.log, display });
      else {
        const timeout = config.build.timeoutSeconds;
        const left = timeout > 0 ? Math.max(1, Math.ceil(timeout - (Date.now() - startedAt) / 1000)) : 0;
        await run(process.execPath, [deps.devcontainerCli, ...args], {
          baseEnv: config.childEnv,
          env,
          display,
          log: tailing.log,
          signal: options.signal,
          groups: deps.groups,
          secrets: plan.secrets,
          timeoutSeconds: left,
        });
      }
      return;
    } catch (err) {
      const ended = err instanceof CommandFailure && !err.result.aborted && !err.result.timedOut;
      const again = ended ? pushAgain(tailing.tail(), attempt) : undefined;
      if (again !== undefined) {
        log.write(`\n# ${again.line}\n`);
        await pause(again.delayMs, options.signal);
        continue;
      }
      // A try that reached the registry had its builder: only another failure may be its loss.
      const reachedRegistry = tailing.tail().includes('unexpected status from');
      if (!ended || reachedRegistry || moves >= BUILDER_MOVES || !(await movedOffLostBuilder(options, log)))
        throw err;
      moves += 1;
      attempt -= 1;
    }
  }
}

export async function buildAndPush(options: BuildAndPushOptions): Promise<{ logId: string }> {
  const { plan, deps } = options;
  const { config } = deps;
  const log = options.log ?? (await deps.logStore.open('img', plan.secrets));
  try {
    return await withSpan('image.build', { 'image.ref': options.imageRef, 'log.id': log.id }, async () => {
      const prepared = await prepare(options, log);
      const args = cliArgs(options, prepared.dockerPath);
      if (plan.platforms.length > 1) {
        log.write(
          `# platforms ${plan.platforms.join(',')}: the CLI reads the base image for ${plan.platforms[0]}` +
            ' (it mis-parses a list), buildx builds them all\n',
        );
      }
      await runCliTries(options, args, () => cliEnv(options, prepared), log);
      await saveCliCache(prepared.tmp, config.scratchDir);
      return { logId: log.id };
    });
  } catch (err) {
    throw stepFailure(err, 'image build', log);
  } finally {
    if (options.log === undefined) await log.close();
  }
}
