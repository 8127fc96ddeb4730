// A prebuild storm at full size on real replicas and a Redis of the run's own (needs the stack;
// `npm run bench:storm -- --repos 2000 [--trigger reconcile|refresh] [--replicas 4] [--slots 2]
// [--redis server|cluster|both]`): `reconcile`, repositories with no image yet (test/helpers/storm.ts,
// the CI test's scenario); `refresh`, the same built FROM a base image that then moves
// (test/helpers/storm-refresh.ts). A CI build of another tenant arrives in the middle. Prints the
// time to queue all from the pass's start, builds run, reused, skipped, run twice, the CI build's
// wait in slot turns, Redis' memory, the load, and a refresh pass's duration (docs/benchmarks.md).
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { REDIS_KINDS, type RedisKind } from '../test/helpers/redis-kind.js';
import { runStorm, type StormFigures } from '../test/helpers/storm.js';
import { runRefreshStorm, type RefreshStormFigures } from '../test/helpers/storm-refresh.js';

const { values } = parseArgs({
  options: {
    repos: { type: 'string', default: '2000' },
    replicas: { type: 'string', default: '4' },
    slots: { type: 'string', default: '2' },
    redis: { type: 'string', default: 'server' },
    trigger: { type: 'string', default: 'reconcile' },
  },
});
const repositories = Number(values.repos);
const replicas = Number(values.replicas);
const slots = Number(values.slots);
const kinds: readonly RedisKind[] =
  values.redis === 'both' ? REDIS_KINDS : REDIS_KINDS.filter((kind) => kind === values.redis);
const trigger = values.trigger;
if (
  ![repositories, replicas, slots].every((n) => Number.isInteger(n) && n > 0) ||
  kinds.length === 0 ||
  (trigger !== 'reconcile' && trigger !== 'refresh')
) {
  console.error(
    'usage: bench:storm -- --repos N --trigger reconcile|refresh --replicas N --slots N --redis server|cluster|both',
  );
  process.exit(2);
}

const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

function report(kind: RedisKind, storm: StormFigures | RefreshStormFigures): void {
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
  if ('passMs' in storm)
    rows.push(
      ['refresh pass duration', seconds(storm.passMs)],
      ['base moved to the pass start', seconds(storm.moveToPassMs)],
      ['reconcile before it, all built', seconds(storm.reconciledMs)],
    );
  console.log(
    `\n${kind}: ${trigger} storm, ${repositories} repositories, ${replicas} replicas x ${slots} slots`,
  );
  for (const [what, value] of rows) console.log(`  ${what.padEnd(32)} ${value}`);
  for (const line of [...storm.skipped, ...storm.ranTwice].slice(0, 10)) console.log(`    ${line}`);
}

console.log(`${new Date().toISOString()}, ${cpus().length} cores, load ${load()} at the start`);
for (const kind of kinds) {
  const onQueued = (figures: { queuedMs: number; redisUsedBytes: number }): void =>
    console.log(
      `${kind}: the pass queued every repository after ${seconds(figures.queuedMs)}, Redis ${mib(figures.redisUsedBytes)}, load ${load()}`,
    );
  const options = { repositories, replicas, slots, kind, timeoutMs: 6 * 3600_000, onQueued };
  const storm = trigger === 'refresh' ? await runRefreshStorm(options) : await runStorm(options);
  report(kind, storm);
  console.log(`  load average at the end          ${load()}`);
}
