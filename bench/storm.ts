// A reconcile storm at full size (needs the stack: `npm run stack -- up`;
// `npm run bench:storm -- --repos 2000 [--replicas 4] [--slots 2] [--redis server|cluster|both]`):
// the scenario of test/integration/prebuilds-storm.test.ts (test/helpers/storm.ts): `--repos`
// configured repositories of one tenant with no image yet, one reconcile pass on real replica
// processes sharing a Redis of the run's own, a CI build of another tenant in the middle. Prints,
// per Redis kind: the time to queue every repository (from the pass's start), builds run, reused,
// skipped, run twice, the CI build's wait in slot turns, Redis' used memory once all were queued,
// and the load average. Target (docs/queue.md): 2,000 queued within 30 s, none skipped or run
// twice, the CI build within one slot turn.
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { REDIS_KINDS, type RedisKind } from '../test/helpers/redis-kind.js';
import { runStorm, type StormFigures } from '../test/helpers/storm.js';

const { values } = parseArgs({
  options: {
    repos: { type: 'string', default: '2000' },
    replicas: { type: 'string', default: '4' },
    slots: { type: 'string', default: '2' },
    redis: { type: 'string', default: 'server' },
  },
});
const repositories = Number(values.repos);
const replicas = Number(values.replicas);
const slots = Number(values.slots);
const kinds: readonly RedisKind[] =
  values.redis === 'both' ? REDIS_KINDS : REDIS_KINDS.filter((kind) => kind === values.redis);
if (![repositories, replicas, slots].every((n) => Number.isInteger(n) && n > 0) || kinds.length === 0) {
  console.error('usage: bench:storm -- --repos N --replicas N --slots N --redis server|cluster|both');
  process.exit(2);
}

const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

function report(kind: RedisKind, storm: StormFigures): void {
  const rows: [string, string][] = [
    ['repositories (records)', `${repositories} (${storm.records.length})`],
    ['time to queue all', `${seconds(storm.queuedAllMs)} (target 30 s at 2,000)`],
    ['time to the last build end', seconds(storm.endedMs)],
    ['builds run', String(storm.built)],
    ['reused', String(storm.reused)],
    ['skipped', String(storm.skipped.length)],
    ['run twice', String(storm.ranTwice.length)],
    [
      'CI build: wait in slot turns',
      `${storm.ci.slotTurns.toFixed(2)} (${storm.ci.takenBefore} storm builds took a slot first, ${replicas * slots} slots; ${storm.ci.record.status ?? ''})`,
    ],
    ['Redis used_memory, all queued', mib(storm.redisUsedBytes)],
  ];
  console.log(`\n${kind}: ${repositories} repositories, ${replicas} replicas x ${slots} slots`);
  for (const [what, value] of rows) console.log(`  ${what.padEnd(32)} ${value}`);
  for (const line of [...storm.skipped, ...storm.ranTwice].slice(0, 10)) console.log(`    ${line}`);
}

console.log(`${new Date().toISOString()}, ${cpus().length} cores, load ${load()} at the start`);
for (const kind of kinds) {
  const onQueued = (figures: { queuedMs: number; redisUsedBytes: number }): void =>
    console.log(
      `${kind}: the pass queued every repository after ${seconds(figures.queuedMs)}, Redis ${mib(figures.redisUsedBytes)}, load ${load()}`,
    );
  const storm = await runStorm({ repositories, replicas, slots, kind, timeoutMs: 6 * 3600_000, onQueued });
  report(kind, storm);
  console.log(`  load average at the end          ${load()}`);
}
