/**
 * The remote builder, set up once per RemoteBuilder (one is created at start-up): `docker buildx
 * create --name <builderName> --driver remote <endpoint>` in the builder state directory
 * (config.dockerConfigDir). An existing builder of that name and endpoint is reused; one with
 * another endpoint is replaced. Setups are serialised; a failed one is retried by the next build.
 * The commands' output goes to the img log of the build that triggered them.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../../src/config/types.js';
import { run, type RunOptions } from '../../src/exec/run.js';
import type { ProcessGroups } from '../../src/exec/process-groups.js';
import type { CommandLogWriter } from '../../src/logs/types.js';

/** Seconds allowed for each buildx bookkeeping command. */
const SETUP_TIMEOUT_SECONDS = 60;

export function dockerEnv(
  config: Pick<Config, 'childEnv'>,
  dockerConfig: string,
  home: string,
): Record<string, string> {
  return { ...config.childEnv, DOCKER_CONFIG: dockerConfig, HOME: home };
}

/** The node endpoints of a buildx instance file (`buildx/instances/<name>`), [] when unreadable (pure). */
export function instanceEndpoints(instanceJson: string): string[] {
  try {
    const parsed = JSON.parse(instanceJson) as { Nodes?: { Endpoint?: unknown }[] };
    return (parsed.Nodes ?? [])
      .map((node) => node.Endpoint)
      .filter((e): e is string => typeof e === 'string');
  } catch {
    return [];
  }
}

/** What buildx knows of `name` without contacting it: undefined when no such builder. */
async function existingEndpoints(dockerConfigDir: string, name: string): Promise<string[] | undefined> {
  const text = await readFile(join(dockerConfigDir, 'buildx', 'instances', name.toLowerCase()), 'utf8').catch(
    () => undefined,
  );
  return text === undefined ? undefined : instanceEndpoints(text);
}

export type RemoteBuilderConfig = Pick<
  Config,
  'childEnv' | 'builderName' | 'builderEndpoint' | 'dockerConfigDir'
>;

export class RemoteBuilder {
  readonly #config: RemoteBuilderConfig;
  readonly #groups: ProcessGroups | undefined;
  #ready = false;
  /** The setup in progress (setups are serialised). */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(config: RemoteBuilderConfig, groups?: ProcessGroups) {
    this.#config = config;
    this.#groups = groups;
  }

  get configured(): boolean {
    return this.#config.builderEndpoint !== undefined && this.#config.builderEndpoint !== '';
  }

  /** Makes sure the builder exists (once; retried after a failure); no-op without an endpoint. */
  async ensure(options: { log: CommandLogWriter; home: string; signal: AbortSignal }): Promise<void> {
    const config = this.#config;
    const endpoint = config.builderEndpoint;
    if (endpoint === undefined || endpoint === '' || this.#ready) return;
    const { log } = options;
    const setup = this.#queue.then(async () => {
      if (this.#ready) return;
      await mkdir(config.dockerConfigDir, { recursive: true, mode: 0o700 });
      const base: RunOptions = {
        baseEnv: dockerEnv(config, config.dockerConfigDir, options.home),
        signal: options.signal,
        timeoutSeconds: SETUP_TIMEOUT_SECONDS,
        log,
        ...(this.#groups === undefined ? {} : { groups: this.#groups }),
      };
      const existing = await existingEndpoints(config.dockerConfigDir, config.builderName);
      if (existing !== undefined) {
        if (existing.includes(endpoint)) {
          log.write(`# reusing remote builder ${config.builderName} (${endpoint})\n`);
          this.#ready = true;
          return;
        }
        log.write(`# builder ${config.builderName} points elsewhere: replacing it\n`);
        await run('docker', ['buildx', 'rm', config.builderName], base);
      }
      await run(
        'docker',
        ['buildx', 'create', '--name', config.builderName, '--driver', 'remote', endpoint],
        base,
      );
      this.#ready = true;
    });
    this.#queue = setup.catch(() => undefined);
    await setup;
  }
}
