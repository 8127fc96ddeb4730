/**
 * One replica of `bench:scale` (bench/scale.ts), a child process: it loads the queue of a source
 * tree (this one, or the baseline's worktree) and, told by its parent over IPC, loops enqueue,
 * take and finish against the bench's redis-server for a while (answering each operation's
 * latency), or sits idle as a service replica's queue does (its waiting builds, no build asked).
 * The same three operations as the service's: an enqueue reads the admission counters first.
 */
import { pathToFileURL } from 'node:url';
import { Writable } from 'node:stream';

type Command =
  | { readonly kind: 'load'; readonly durationMs: number; readonly tenants: number }
  | { readonly kind: 'idle' }
  | { readonly kind: 'sent' };

interface Replica {
  enqueue(entry: Entry): Promise<void>;
  take(): Promise<string | undefined>;
  finish(id: string): Promise<void>;
  idle(): Promise<void>;
}

interface Entry {
  readonly id: string;
  readonly class: 'api';
  readonly tenant: string;
  readonly enqueuedAtMs: number;
  readonly owner: string;
  readonly request: Record<string, unknown>;
  readonly requestId: string;
}

/** The parts of the loaded modules the replica uses (either tree's). */
interface Connection {
  readonly client: { readonly status: string; once(event: 'ready', listener: () => void): void };
}
interface Loaded {
  createLogger(options: Record<string, unknown>): unknown;
  /** The baseline's takes a URL; this tree's a target (src/config/redis-target.ts). */
  createRedisConnection(target: string | { kind: 'server'; url: string }, logger: unknown): Connection;
  createRedisQueue(connection: Connection, replica: string, logger: unknown): unknown;
  WaitingBuilds: new (deps: Record<string, unknown>) => unknown;
}
interface CurrentStore {
  admission(tenant: string): Promise<unknown>;
  enqueue(entry: Entry): Promise<unknown>;
  take(replica: string, nowMs: number): Promise<{ entry?: { id: string } }>;
  ended(id: string): Promise<void>;
}
interface BaselineState {
  readonly running: readonly { readonly id: string; readonly sinceMs?: number }[];
}
type Change<T> = (
  state: BaselineState,
  alive: { builds: ReadonlySet<string> },
) => { state: BaselineState; value: T };
interface BaselineStore {
  read(): Promise<unknown>;
  update<T>(change: Change<T>): Promise<T>;
  changed(): Promise<void>;
}
interface BaselineOrder {
  withEntry(state: BaselineState, entry: Entry): BaselineState;
  pickNext(state: BaselineState, canTake: (entry: Entry) => boolean): Entry | undefined;
  withTaken(state: BaselineState, entry: Entry, nowMs: number): BaselineState;
  withoutRunning(state: BaselineState, id: string): BaselineState;
}

const [root = '', url = '', name = '', flavour = ''] = process.argv.slice(2);
const load = async <T = Loaded>(path: string): Promise<T> =>
  (await import(pathToFileURL(`${root}/${path}`).href)) as T;
let n = 0;

/** A queued build as the service writes it: a request of a realistic size (about 400 bytes). */
export const benchEntry = (tenant: string, owner: string, id = `${owner}-${(n += 1)}`): Entry => ({
  id,
  class: 'api',
  tenant,
  enqueuedAtMs: Date.now(),
  owner,
  request: {
    repository: `https://git.example.com/${tenant}/service-${n % 97}.git`,
    ref: 'refs/heads/main',
    imageName: `registry.example.com/${tenant}/service-${n % 97}:devcontainer`,
    platforms: ['linux/amd64'],
    configPath: '.devcontainer/devcontainer.json',
    cacheFrom: [`registry.example.com/${tenant}/cache`],
    labels: { team: tenant, purpose: 'bench' },
  },
  requestId: `req-${id}`,
});

async function connect(): Promise<{ connection: Connection; logger: unknown }> {
  const { createLogger } = await load('src/observability/logger.ts');
  const logger = createLogger({
    serviceName: 'bench',
    environment: 'bench',
    destination: new Writable({ write: (_c, _e, cb) => cb() }),
  });
  const { createRedisConnection } = await load('src/redis/connection.ts');
  const connection = createRedisConnection(flavour === 'baseline' ? url : { kind: 'server', url }, logger);
  if (connection.client.status !== 'ready')
    await new Promise<void>((r) => connection.client.once('ready', () => r()));
  return { connection, logger };
}

/** The idle replica: the service's own waiting builds over this store, nothing asked of them. */
async function idleWith(modulePath: string, store: unknown, logger: unknown): Promise<void> {
  const { WaitingBuilds } = await load(modulePath);
  const metric = { set: () => undefined, observe: () => undefined };
  new WaitingBuilds({
    config: { build: { quotas: [], maxQueued: 200, maxQueuedPrebuilds: 10_000 } },
    store,
    shared: true,
    replica: name,
    registry: { start: async () => 'never' },
    slots: { reserve: () => ({ release: () => undefined }), onFree: () => undefined },
    logger,
    metrics: { countBuild: () => undefined, queueDepth: metric, queueWait: metric },
    counted: () => undefined,
    run: () => undefined,
    endUnstarted: async () => undefined,
  });
}

async function currentReplica(): Promise<Replica> {
  const { connection, logger } = await connect();
  const { createRedisQueue } = await load('src/queue/redis-queue.ts');
  const store = createRedisQueue(connection, name, logger) as CurrentStore;
  return {
    async enqueue(entry) {
      await store.admission(entry.tenant);
      await store.enqueue(entry);
    },
    take: async () => (await store.take(name, Date.now())).entry?.id,
    finish: (id) => store.ended(id),
    idle: () => idleWith('workers/queue/waiting-builds.ts', store, logger),
  };
}

/** The baseline's queue, used as its workers/waiting-builds.ts used it. */
async function baselineReplica(): Promise<Replica> {
  const { connection, logger } = await connect();
  const { createRedisQueue } = await load('src/queue/redis-queue.ts');
  const order = await load<BaselineOrder>('src/queue/fair-order.ts');
  const store = createRedisQueue(connection, name, logger) as BaselineStore;
  // Its queue connection (a duplicate) connects on its own: ready once a read answers.
  for (;;) {
    try {
      await store.read();
      break;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  const change = <T>(fn: Change<T>): Promise<T> => store.update(fn);
  return {
    async enqueue(entry) {
      await store.read();
      await change((state) => ({ state: order.withEntry(state, entry), value: undefined }));
      await store.changed();
    },
    async take() {
      const taken = await change((state, alive) => {
        const now = Date.now();
        const running = state.running.filter(
          (r) => alive.builds.has(r.id) || now - (r.sinceMs ?? 0) < 30_000,
        );
        const next = { ...state, running };
        const pick = order.pickNext(next, (w) => w.request !== undefined);
        return { state: pick === undefined ? next : order.withTaken(next, pick, now), value: pick };
      });
      if (taken !== undefined) await store.changed();
      return taken?.id;
    },
    async finish(id) {
      await store.read();
      await change((state) => ({ state: order.withoutRunning(state, id), value: undefined }));
      await store.changed();
    },
    idle: () => idleWith('workers/waiting-builds.ts', store, logger),
  };
}

/** Loops enqueue, take, finish until `durationMs` passed; answers each operation's milliseconds. */
async function loop(
  replica: Replica,
  durationMs: number,
  tenants: number,
): Promise<{ ms: number[]; errors: number }> {
  const ms: number[] = [];
  let errors = 0;
  const timed = async <T>(op: () => Promise<T>): Promise<T | undefined> => {
    const start = performance.now();
    try {
      const value = await op();
      ms.push(performance.now() - start);
      return value;
    } catch {
      errors += 1;
      return undefined;
    }
  };
  const end = Date.now() + durationMs;
  for (let i = 0; Date.now() < end; i += 1) {
    await timed(() => replica.enqueue(benchEntry(`tenant-${i % tenants}`, name)));
    const id = await timed(() => replica.take());
    if (id !== undefined) await timed(() => replica.finish(id));
  }
  return { ms, errors };
}

/** Every command this process sends Redis (any connection, pipelines' included), counted here. */
let sent = 0;
async function countSent(): Promise<void> {
  const { Redis } = await import('ioredis');
  const send = Redis.prototype.sendCommand;
  Redis.prototype.sendCommand = function (
    this: InstanceType<typeof Redis>,
    ...args: Parameters<typeof send>
  ) {
    sent += 1;
    return send.apply(this, args);
  };
}

async function main(): Promise<void> {
  await countSent();
  const replica = flavour === 'baseline' ? await baselineReplica() : await currentReplica();
  process.on('message', (command: Command) => {
    const done = (answer: unknown): void => void process.send?.(answer);
    if (command.kind === 'load') void loop(replica, command.durationMs, command.tenants).then(done);
    else if (command.kind === 'sent') done({ sent });
    else void replica.idle().then(() => done({ idle: true }));
  });
  process.send?.({ ready: true });
}

if (process.send !== undefined) void main();
