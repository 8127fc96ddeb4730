/**
 * A remote builder, set up once per RemoteBuilder (one per endpoint, made at start-up): `docker buildx
 * create --name <name> --driver remote [--driver-opt cacert=|cert=|key=|servername=] <endpoint>` in the builder state directory
 * (config.dockerConfigDir). An existing builder of that name and endpoint is reused; one with
 * another endpoint is replaced. Setups are serialised; a failed one is retried by the next build.
 * The commands' output goes to the img log of the build that triggered them.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BuilderTls, Config } from '../../src/config/types.js';
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

/** One node of a buildx instance file: its endpoint and driver options. */
export interface InstanceNode {
  readonly endpoint: string;
  readonly driverOpts: Readonly<Record<string, string>>;
}

/** The nodes of a buildx instance file (`buildx/instances/<name>`), [] when unreadable (pure). */
export function instanceNodes(instanceJson: string): InstanceNode[] {
  try {
    const parsed = JSON.parse(instanceJson) as { Nodes?: { Endpoint?: unknown; DriverOpts?: unknown }[] };
    return (parsed.Nodes ?? []).flatMap((node) =>
      typeof node.Endpoint === 'string'
        ? [{ endpoint: node.Endpoint, driverOpts: (node.DriverOpts ?? {}) as Record<string, string> }]
        : [],
    );
  } catch {
    return [];
  }
}

/** The remote driver's TLS options: paths only (the key's text never leaves its file). */
export function tlsDriverOpts(tls: BuilderTls | undefined): Record<string, string> {
  return {
    ...(tls?.caPath === undefined ? {} : { cacert: tls.caPath }),
    ...(tls?.certPath === undefined ? {} : { cert: tls.certPath }),
    ...(tls?.keyPath === undefined ? {} : { key: tls.keyPath }),
    ...(tls?.serverName === undefined ? {} : { servername: tls.serverName }),
  };
}

function sameOpts(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}

/** What buildx knows of `name` without contacting it: undefined when no such builder. */
async function existingNodes(dockerConfigDir: string, name: string): Promise<InstanceNode[] | undefined> {
  const text = await readFile(join(dockerConfigDir, 'buildx', 'instances', name.toLowerCase()), 'utf8').catch(
    () => undefined,
  );
  return text === undefined ? undefined : instanceNodes(text);
}

export type RemoteBuilderConfig = Pick<Config, 'childEnv' | 'dockerConfigDir'>;

/** One builder of the fleet: its buildx name, its endpoint and the TLS settings all share. */
export interface BuilderSpec {
  readonly name: string;
  readonly endpoint: string;
  readonly tls?: BuilderTls;
}

/** The buildx name of the builder at `position`: builderName alone when it is the only one. */
export function builderSpecs(
  config: Pick<Config, 'builderName' | 'builderEndpoints' | 'builderTls'>,
): BuilderSpec[] {
  const single = config.builderEndpoints.length === 1;
  return config.builderEndpoints.map((endpoint, position) => ({
    name: single ? config.builderName : `${config.builderName}-${position}`,
    endpoint,
    ...(config.builderTls === undefined ? {} : { tls: config.builderTls }),
  }));
}

export interface EnsureOptions {
  readonly log: CommandLogWriter;
  readonly home: string;
  readonly signal: AbortSignal;
}

/** What a build uses of its builder: a RemoteBuilder, or its place in the fleet (fleet/fleet.ts). */
export interface BuilderHandle {
  readonly configured: boolean;
  /** The buildx builder name (BUILDX_BUILDER), undefined without an endpoint. */
  readonly name: string | undefined;
  /** Makes sure the builder can be used; throws (a 500 with the img log) when it cannot. */
  ensure(options: EnsureOptions): Promise<void>;
}

export class RemoteBuilder implements BuilderHandle {
  readonly #config: RemoteBuilderConfig;
  readonly #spec: BuilderSpec | undefined;
  readonly #groups: ProcessGroups | undefined;
  #ready = false;
  /** The setup in progress (setups are serialised). */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(config: RemoteBuilderConfig, spec: BuilderSpec | undefined, groups?: ProcessGroups) {
    this.#config = config;
    this.#spec = spec;
    this.#groups = groups;
  }

  get configured(): boolean {
    return this.#spec !== undefined;
  }

  /** The buildx builder name (BUILDX_BUILDER of a build), undefined without an endpoint. */
  get name(): string | undefined {
    return this.#spec?.name;
  }

  /** Makes sure the builder exists (once; retried after a failure); no-op without an endpoint. */
  async ensure(options: EnsureOptions): Promise<void> {
    const spec = this.#spec;
    if (spec === undefined || this.#ready) return;
    const setup = this.#queue.then(async () => {
      if (this.#ready) return;
      await this.#setUp(spec, options);
      this.#ready = true;
    });
    this.#queue = setup.catch(() => undefined);
    await setup;
  }

  async #setUp(spec: BuilderSpec, options: EnsureOptions): Promise<void> {
    const config = this.#config;
    const { log } = options;
    await mkdir(config.dockerConfigDir, { recursive: true, mode: 0o700 });
    const base: RunOptions = {
      baseEnv: dockerEnv(config, config.dockerConfigDir, options.home),
      signal: options.signal,
      timeoutSeconds: SETUP_TIMEOUT_SECONDS,
      log,
      ...(this.#groups === undefined ? {} : { groups: this.#groups }),
    };
    const opts = tlsDriverOpts(spec.tls);
    const existing = await existingNodes(config.dockerConfigDir, spec.name);
    if (existing !== undefined) {
      if (existing.some((node) => node.endpoint === spec.endpoint && sameOpts(node.driverOpts, opts))) {
        log.write(`# reusing remote builder ${spec.name} (${spec.endpoint})\n`);
        return;
      }
      log.write(`# builder ${spec.name} points elsewhere or has other TLS settings: replacing it\n`);
      await run('docker', ['buildx', 'rm', spec.name], base);
    }
    const driverOpts = Object.entries(opts).flatMap(([key, value]) => ['--driver-opt', `${key}=${value}`]);
    await run(
      'docker',
      ['buildx', 'create', '--name', spec.name, '--driver', 'remote', ...driverOpts, spec.endpoint],
      base,
    );
  }
}
