/**
 * Benchmark (not a test): the shared build queue on the real stack, three service processes of two
 * slots each sharing one Redis (docs/queue.md), against the 429-and-retry it replaces for async
 * builds.
 *
 *   npm run stack -- up
 *   npm run bench:queue
 *
 * The day: 60 builds from 6 tenants (repositories of their own owners), one of them flooding 40
 * at once, then the 5 others 4 each, sent round-robin to the replicas as a load balancer would.
 * The builds are cheap (each tenant's inputs built once beforehand: reuse answers them), so the
 * queue, not the building, is measured. Printed per mode: each tenant's median and worst wait,
 * the flooding tenant's share of the slots taken while another tenant waited, and (queued mode)
 * the median time from a slot freeing to the next queued build starting on that replica.
 * Target: that median under 50 ms. The baseline: the same day as synchronous POSTs retried after
 * their Retry-After when refused (429).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BuildRecord } from '../src/builds/types.js';
import { ownDockerfileRepo } from '../test/helpers/build-support.js';
import { startRedis } from '../test/helpers/redis-process.js';
import {
  replicaEnv,
  serverGitCredentials,
  startReplicas,
  stopReplicas,
  type Replica,
} from '../test/helpers/replicas.js';
import { stackEnv } from '../test/stack/env.js';

const stack = stackEnv();
const TENANTS = 6;
const FLOOD = 40;
const EACH = 4;
const SLOTS_PER_REPLICA = 2;

interface Tenant {
  readonly name: string;
  readonly body: string;
}

/** One build of the day: who asked, when (ms), and when it started (ms, the service's clock). */
interface Sample {
  readonly tenant: string;
  readonly askedMs: number;
  startMs: number;
  id?: string;
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : (sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN);
};
const seconds = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
const timeOf = (line: Record<string, unknown>): number =>
  typeof line.time === 'number' ? line.time : Date.parse(String(line.time));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function post(replica: Replica, body: string, async: boolean): Promise<Response> {
  return fetch(`${replica.url}/build`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(async ? { Prefer: 'respond-async' } : {}) },
    body,
  });
}

async function waitFinished(replica: Replica, ids: readonly string[]): Promise<void> {
  for (;;) {
    const records = await Promise.all(
      ids.map(async (id) => (await (await fetch(`${replica.url}/builds/${id}`)).json()) as BuildRecord),
    );
    const unknown = records.find((r) => typeof r.phase !== 'string');
    if (unknown !== undefined) throw new Error(`a build could not be read: ${JSON.stringify(unknown)}`);
    const failed = records.find((r) => r.phase === 'finished' && r.status !== 'success');
    if (failed !== undefined)
      throw new Error(`build ${failed.id} ended ${String(failed.status)}: ${String(failed.error)}`);
    if (records.every((r) => r.phase === 'finished')) return;
    await sleep(250);
  }
}

/** The day's order of asking: the flood first, then the others' few. */
const day = (tenants: readonly Tenant[]): Tenant[][] => {
  const [flood, ...others] = tenants as [Tenant, ...Tenant[]];
  return [
    Array.from({ length: FLOOD }, () => flood),
    others.flatMap((t) => Array.from({ length: EACH }, () => t)),
  ];
};

/** The flooding tenant's share of the starts that happened while another tenant had a build waiting. */
function floodShare(samples: readonly Sample[], flood: string): number {
  const starts = [...samples].sort((a, b) => a.startMs - b.startMs);
  const contested = starts.filter((s) =>
    samples.some((o) => o.tenant !== flood && o !== s && o.askedMs <= s.startMs && o.startMs > s.startMs),
  );
  return contested.filter((s) => s.tenant === flood).length / Math.max(1, contested.length);
}

function report(mode: string, samples: readonly Sample[], flood: string): void {
  console.log(`\n${mode}`);
  for (const tenant of [...new Set(samples.map((s) => s.tenant))]) {
    const waits = samples.filter((s) => s.tenant === tenant).map((s) => Math.max(0, s.startMs - s.askedMs));
    console.log(
      `  ${tenant === flood ? 'flood ' : 'tenant'} ${tenant}: ${String(waits.length)} builds, median wait ${seconds(median(waits))}, worst ${seconds(Math.max(...waits))}`,
    );
  }
  console.log(
    `  the flooding tenant's share of the slots while others waited: ${(floodShare(samples, flood) * 100).toFixed(0)} %`,
  );
}

/** Queued mode: async POSTs; starts and slot frees from the replicas' own logs. */
async function queued(replicas: readonly Replica[], tenants: readonly Tenant[]): Promise<void> {
  const samples: Sample[] = [];
  let next = 0;
  for (const wave of day(tenants)) {
    await Promise.all(
      wave.map(async (tenant) => {
        const replica = replicas[next++ % replicas.length] as Replica;
        const askedMs = Date.now();
        const res = await post(replica, tenant.body, true);
        if (res.status !== 202)
          throw new Error(`async POST answered ${String(res.status)}: ${await res.text()}`);
        const record = (await res.json()) as BuildRecord;
        samples.push({ tenant: tenant.name, askedMs, startMs: askedMs, id: record.id });
      }),
    );
  }
  await waitFinished(
    replicas[0] as Replica,
    samples.map((s) => s.id ?? ''),
  );
  const lines: Record<string, unknown>[] = replicas.flatMap((r) =>
    r.service.lines().map((l) => ({ ...l, replica: r.name })),
  );
  const taken = new Map(
    lines.filter((l) => l.msg === 'build taken from the queue').map((l) => [String(l.buildId), l]),
  );
  for (const s of samples) {
    const take = taken.get(s.id ?? '');
    // Started at once (never queued): its wait is the answer's; queued: from the service's log.
    if (take !== undefined) s.startMs = s.askedMs + Number(take.waitedMs);
  }
  console.log(`  (${String(taken.size)} of ${String(samples.length)} builds waited in the queue)`);
  report('queued (async POSTs, one shared queue)', samples, tenants[0]?.name ?? '');
  // A slot frees when a build ends; the next queued build taken on that replica starts then.
  const ends = lines.filter((l) => l.msg === 'build succeeded');
  const gaps: number[] = [];
  for (const take of taken.values()) {
    const at = timeOf(take);
    const enqueuedAt = at - Number(take.waitedMs);
    const freed = ends
      .filter((e) => e.replica === take.replica && timeOf(e) <= at && timeOf(e) >= enqueuedAt)
      .map(timeOf)
      .sort((a, b) => b - a)[0];
    if (freed !== undefined) gaps.push(at - freed);
  }
  console.log(
    `  slot freed to the next queued build started: median ${String(median(gaps))} ms over ${String(gaps.length)} (target < 50 ms)`,
  );
}

/** Baseline: synchronous POSTs, each 429 retried after its Retry-After. */
async function retried(replicas: readonly Replica[], tenants: readonly Tenant[]): Promise<void> {
  const samples: Sample[] = [];
  let next = 0;
  let refusals = 0;
  const one = async (tenant: Tenant): Promise<void> => {
    const askedMs = Date.now();
    for (;;) {
      const replica = replicas[next++ % replicas.length] as Replica;
      const sentMs = Date.now();
      const res = await post(replica, tenant.body, false);
      if (res.status === 200) {
        await res.arrayBuffer();
        samples.push({ tenant: tenant.name, askedMs, startMs: sentMs });
        return;
      }
      const text = await res.text();
      if (res.status !== 429) throw new Error(`sync POST answered ${String(res.status)}: ${text}`);
      refusals += 1;
      await sleep(Number(res.headers.get('retry-after') ?? '1') * 1000);
    }
  };
  const [flood, others] = day(tenants) as [Tenant[], Tenant[]];
  const running = flood.map(one);
  await sleep(50);
  await Promise.all([...running, ...others.map(one)]);
  report(
    `baseline (sync POSTs, 429 retried after Retry-After: ${String(refusals)} refusals)`,
    samples,
    tenants[0]?.name ?? '',
  );
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'ibs-bench-queue-'));
  const redis = await startRedis();
  const removals: (() => void)[] = [];
  let replicas: Replica[] = [];
  try {
    replicas = await startReplicas(
      ['a', 'b', 'c'],
      replicaEnv(stack, redis.url, {
        MAX_CONCURRENT_BUILDS: String(SLOTS_PER_REPLICA),
        GIT_CREDENTIALS_CONFIG_PATH: serverGitCredentials(stack, dir),
        BUILD_REUSE: 'true',
        BUILD_HISTORY: '500',
      }),
    );
    const tenants: Tenant[] = Array.from({ length: TENANTS }, (_, i) => {
      const nonce = randomBytes(8).toString('hex');
      const repo = ownDockerfileRepo(`FROM ${stack.BASE_IMAGE_ANON}\nENV IBS_BENCH_QUEUE=${nonce}\n`);
      removals.push(repo.remove);
      const name = new URL(repo.repository).pathname.split('/')[1]?.replace(/\.git$/, '') ?? String(i);
      const image = { registry: stack.REGISTRY_ANON, name: `bench/queue-${nonce}` };
      return { name, body: JSON.stringify({ repository: repo.repository, image }) };
    });
    // Each tenant's inputs built once: the day's builds are answered by reuse.
    const warm = await Promise.all(
      tenants.map(async (tenant, i) => {
        const res = await post(replicas[i % replicas.length] as Replica, tenant.body, true);
        return ((await res.json()) as BuildRecord).id;
      }),
    );
    await waitFinished(replicas[0] as Replica, warm);
    console.log(
      `${String(FLOOD + EACH * (TENANTS - 1))} builds from ${String(TENANTS)} tenants (one flooding ${String(FLOOD)}), 3 replicas x ${String(SLOTS_PER_REPLICA)} slots, Redis`,
    );
    await queued(replicas, tenants);
    await retried(replicas, tenants);
  } finally {
    await stopReplicas(replicas);
    await redis.dispose();
    for (const remove of removals) remove();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
