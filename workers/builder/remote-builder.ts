/**
 * A remote builder, set up once per RemoteBuilder: `docker buildx create --name <name> --driver remote
 * [--driver-opt cacert=|cert=|key=|servername=] <endpoint>` in config.dockerConfigDir, or with `nodes`
 * one node per endpoint (`--append --node ... --platform ...`). An existing builder with the same
 * nodes is reused, another replaced. Setups are serialised; a failed one is retried by the next
 * build. The commands' output goes to the img log of the build that triggered them.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BuilderTls, Config } from '../../src/config/types.js';
import { builderEndpoints } from '../../src/config/builder-endpoints.js';
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
  // TMPDIR too: whatever buildx writes for itself stays in the service's scratch space.
  return { ...config.childEnv, DOCKER_CONFIG: dockerConfig, HOME: home, TMPDIR: home };
}

/** One node of a buildx instance file: its endpoint, driver options and declared platforms. */
export interface InstanceNode {
  readonly endpoint: string;
  readonly driverOpts: Readonly<Record<string, string>>;
  readonly platforms: readonly string[];
}

interface InstancePlatform {
  os?: string;
  architecture?: string;
  variant?: string;
}

/** `os/arch[/variant]` as buildx stores it (arm64's default variant v8 dropped). */
function normalisedPlatform(platform: string): string {
  return platform.replace(/^([^/]+)\/arm64\/v8$/, '$1/arm64');
}

const platformText = (p: InstancePlatform): string =>
  [p.os ?? '', p.architecture ?? '', ...(p.variant ? [p.variant] : [])].join('/');

/** The nodes of a buildx instance file (`buildx/instances/<name>`), [] when unreadable (pure). */
export function instanceNodes(instanceJson: string): InstanceNode[] {
  try {
    const parsed = JSON.parse(instanceJson) as {
      Nodes?: { Endpoint?: unknown; DriverOpts?: unknown; Platforms?: InstancePlatform[] | null }[];
    };
    return (parsed.Nodes ?? []).flatMap((node) =>
      typeof node.Endpoint === 'string'
        ? [
            {
              endpoint: node.Endpoint,
              driverOpts: (node.DriverOpts ?? {}) as Record<string, string>,
              platforms: (node.Platforms ?? []).map((p) => normalisedPlatform(platformText(p))),
            },
          ]
        : [],
    );
  } catch {
    return [];
  }
}

/** The remote driver's TLS options: paths only (the key's text never leaves its file). */
function tlsDriverOpts(tls: BuilderTls | undefined): Record<string, string> {
  return {
    ...(tls?.caPath === undefined ? {} : { cacert: tls.caPath }),
    ...(tls?.certPath === undefined ? {} : { cert: tls.certPath }),
    ...(tls?.keyPath === undefined ? {} : { key: tls.keyPath }),
    ...(tls?.serverName === undefined ? {} : { servername: tls.serverName }),
  };
}

function sameOpts(
  actual: Readonly<Record<string, string>>,
  wanted: Readonly<Record<string, string>>,
): boolean {
  const keys = Object.keys(actual);
  return keys.length === Object.keys(wanted).length && keys.every((key) => actual[key] === wanted[key]);
}

/** Whether the instance's nodes are `nodes` (in order) with the options `opts`. */
function sameNodes(
  existing: readonly InstanceNode[],
  nodes: readonly BuilderNode[],
  opts: Readonly<Record<string, string>>,
): boolean {
  const platforms = (list: readonly string[]): string => list.map(normalisedPlatform).sort().join(',');
  return (
    existing.length === nodes.length &&
    nodes.every((node, index) => {
      const found = existing[index];
      return (
        found !== undefined &&
        found.endpoint === node.endpoint &&
        sameOpts(found.driverOpts, opts) &&
        platforms(found.platforms) === platforms(node.platforms)
      );
    })
  );
}

/** `docker buildx create` of node `i`: the builder itself for the first, `--append` for the others. */
function createArgs(
  spec: BuilderSpec,
  node: BuilderNode,
  index: number,
  opts: Readonly<Record<string, string>>,
): string[] {
  const driverOpts = Object.entries(opts).flatMap(([key, value]) => ['--driver-opt', `${key}=${value}`]);
  const nodeArgs =
    spec.nodes === undefined
      ? []
      : [
          ...(index === 0 ? [] : ['--append']),
          '--node',
          `${spec.name}-${index}`,
          ...(node.platforms.length === 0 ? [] : ['--platform', node.platforms.join(',')]),
        ];
  return [
    'buildx',
    'create',
    '--name',
    spec.name,
    '--driver',
    'remote',
    ...nodeArgs,
    ...driverOpts,
    node.endpoint,
  ];
}

/** What buildx knows of `name` without contacting it: undefined when no such builder. */
export async function existingNodes(
  dockerConfigDir: string,
  name: string,
): Promise<InstanceNode[] | undefined> {
  const text = await readFile(join(dockerConfigDir, 'buildx', 'instances', name.toLowerCase()), 'utf8').catch(
    () => undefined,
  );
  return text === undefined ? undefined : instanceNodes(text);
}

export type RemoteBuilderConfig = Pick<Config, 'childEnv' | 'dockerConfigDir'>;

/** One node of a builder with several: its endpoint and the platforms it builds for this builder. */
export interface BuilderNode {
  readonly endpoint: string;
  readonly platforms: readonly string[];
}

/** One builder of the fleet: its buildx name, its endpoint and the TLS settings all share. */
export interface BuilderSpec {
  readonly name: string;
  /** The endpoint (of the first node, with `nodes`). */
  readonly endpoint: string;
  readonly tls?: BuilderTls;
  /** Several nodes, each building its platforms (a build split over builders, docs/fleet.md). */
  readonly nodes?: readonly BuilderNode[];
}

/** The buildx name of the builder at `position`: builderName alone when it is the only one. */
export function builderSpecs(config: Pick<Config, 'builderName' | 'builders' | 'builderTls'>): BuilderSpec[] {
  const single = config.builders.length === 1;
  return builderEndpoints(config).map((endpoint, position) => ({
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
    const nodes = spec.nodes ?? [{ endpoint: spec.endpoint, platforms: [] }];
    const existing = await existingNodes(config.dockerConfigDir, spec.name);
    if (existing !== undefined) {
      if (sameNodes(existing, nodes, opts)) {
        log.write(`# reusing remote builder ${spec.name} (${nodes.map((n) => n.endpoint).join(', ')})\n`);
        return;
      }
      log.write(`# builder ${spec.name} points elsewhere or has other TLS settings: replacing it\n`);
      await run('docker', ['buildx', 'rm', spec.name], base);
    }
    for (const [i, node] of nodes.entries()) {
      await run('docker', createArgs(spec, node, i, opts), base);
    }
  }
}
