/**
 * The remote builder, set up once per process: `docker buildx create --name <builderName>
 * --driver remote <endpoint>` in the builder state directory (config.dockerConfigDir). An
 * existing builder of that name and endpoint is reused; one with another endpoint is replaced.
 * Setups are serialised; a failed one is retried by the next build. The commands' output goes
 * to the img log of the build that triggered them.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../../src/config/types.js';
import { run, type RunOptions } from '../../src/exec/run.js';
import type { CommandLogWriter } from '../../src/logs/types.js';

const ready = new Set<string>();
let queue: Promise<unknown> = Promise.resolve();

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

export async function ensureRemoteBuilder(options: {
  config: Pick<Config, 'childEnv' | 'builderName' | 'builderEndpoint' | 'dockerConfigDir'>;
  log: CommandLogWriter;
  home: string;
  signal: AbortSignal;
}): Promise<void> {
  const { config, log } = options;
  const endpoint = config.builderEndpoint;
  if (endpoint === undefined || endpoint === '') return;
  const key = `${config.dockerConfigDir}\0${config.builderName}\0${endpoint}`;
  if (ready.has(key)) return;

  const setup = queue.then(async () => {
    if (ready.has(key)) return;
    await mkdir(config.dockerConfigDir, { recursive: true, mode: 0o700 });
    const base: RunOptions = {
      baseEnv: dockerEnv(config, config.dockerConfigDir, options.home),
      signal: options.signal,
      timeoutSeconds: SETUP_TIMEOUT_SECONDS,
    };
    const existing = await existingEndpoints(config.dockerConfigDir, config.builderName);
    if (existing !== undefined) {
      if (existing.includes(endpoint)) {
        log.write(`# reusing remote builder ${config.builderName} (${endpoint})\n`);
        ready.add(key);
        return;
      }
      log.write(`# builder ${config.builderName} points elsewhere: replacing it\n`);
      await run('docker', ['buildx', 'rm', config.builderName], { ...base, log });
    }
    await run('docker', ['buildx', 'create', '--name', config.builderName, '--driver', 'remote', endpoint], {
      ...base,
      log,
    });
    ready.add(key);
  });
  queue = setup.catch(() => undefined);
  await setup;
}
