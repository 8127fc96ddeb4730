// A reconcile storm in Redis mode, four real service processes of two slots each
// (test/helpers/storm.ts): one pass over configured repositories that have no image yet queues every
// one of them, though the API's `build.maxQueued` is 5 (prebuilds have their own bound,
// docs/queue.md); each is built or reused exactly once, none is skipped; a CI build of another tenant
// arriving in the middle starts within one turn of the slots; each branch tag ends on its build,
// whichever replica ran it. STORM_REPOSITORIES on a redis-server
// (200 by default; `STORM_REPOSITORIES=2000` runs the full storm), a fifth of them on a three-master
// Redis Cluster (the same scripts and keys, one slot: docs/redis.md); bench/storm.ts prints figures.
import test from 'ava';
import type { BuildRecord } from '../../src/builds/types.js';
import { parseImageString } from '../../src/registry/image-string.js';
import { stack } from '../helpers/build-support.js';
import { tagDigest } from '../helpers/prebuild-support.js';
import type { RedisKind } from '../helpers/redis-kind.js';
import { runStorm } from '../helpers/storm.js';

const REPOSITORIES = Number(process.env.STORM_REPOSITORIES ?? 200);
const REPLICAS = 4;
const SLOTS = 2;
/** The records whose `main` tag is not (yet) the digest of the image they built. */
async function untagged(records: readonly BuildRecord[]): Promise<string[]> {
  const left: string[] = [];
  for (const record of records) {
    const parsed = parseImageString(record.image, [stack.REGISTRY_ANON]);
    if (parsed === undefined) throw new Error(`not an image reference: ${record.image}`);
    const { registry, name, tag } = parsed.ref;
    const built = await tagDigest(registry, name, tag);
    if (built === undefined || (await tagDigest(registry, name, 'main')) !== built) left.push(record.image);
  }
  return left;
}

const sizes: [RedisKind, number][] = [
  ['server', REPOSITORIES],
  ['cluster', Math.ceil(REPOSITORIES / 5)],
];

for (const [kind, repositories] of sizes) {
  test.serial(
    `${kind}: a reconcile storm of ${repositories} queues every repository once; a CI build of another tenant starts within one slot turn`,
    async (t) => {
      t.timeout(1_800_000);
      const storm = await runStorm({
        repositories,
        replicas: REPLICAS,
        slots: SLOTS,
        kind,
        timeoutMs: 1_500_000,
      });
      t.log(
        `${repositories} repositories, ${REPLICAS} replicas: all queued or started ${storm.queuedAllMs} ms after the pass began, all ended after ${storm.endedMs} ms; the CI build waited ${storm.ci.takenBefore} slot takes`,
      );
      t.is(storm.records.length, repositories, 'one build per repository');
      t.deepEqual(storm.skipped, [], 'no prebuild skipped or refused');
      t.deepEqual(storm.ranTwice, [], 'each repository built or reused exactly once');
      t.is(new Set(storm.records.map((r) => r.image)).size, repositories);
      t.deepEqual(
        storm.records.filter((r) => r.status !== 'success').map((r) => `${r.repository} ${r.status ?? ''}`),
        [],
      );
      // The replica that ran each prebuild moved its branch tag, not only the one that queued it.
      t.deepEqual(await untagged(storm.records), [], 'every branch tag on its build');
      const { accepted, record, takenBefore } = storm.ci;
      // Its place when it waited (a slot may take it before its 202 is written: then it has none).
      if (accepted.queue !== undefined) t.deepEqual(accepted.queue, { position: 1, ahead: 0 });
      t.is(record.status, 'success');
      t.true(
        takenBefore <= REPLICAS * SLOTS,
        `${takenBefore} storm builds took a slot before the CI build (one turn: ${REPLICAS * SLOTS})`,
      );
    },
  );
}
