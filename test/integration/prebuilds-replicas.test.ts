// Redis mode, two real service processes: the prebuild schedules run on one replica only, and
// when that replica is lost (SIGKILL of it and its children) the other takes them within a minute.
// On a redis-server and on a three-master Redis Cluster, with the same assertions.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { stack } from '../helpers/build-support.js';
import { eventually } from '../helpers/eventually.js';
import { pushedRepo, type PushedRepo } from '../helpers/pushed-repo.js';
import { REDIS_KINDS } from '../helpers/redis-kind.js';
import { replicaSets } from '../helpers/replica-sets.js';
import { replicaEnv, serverGitCredentials, within, type Replica } from '../helpers/replicas.js';

const RUNS = 'schedules: this instance runs them';
const dir = mkdtempSync(join(tmpdir(), 'ibs-prebuild-replicas-'));
let repo: PushedRepo;
const configurations = join(dir, 'prebuilds.json');
const replicasOn = replicaSets(['a', 'b'], (redis) =>
  replicaEnv(stack, redis, {
    PREBUILD_CONFIGURATIONS_PATH: configurations,
    GIT_CREDENTIALS_CONFIG_PATH: serverGitCredentials(stack, dir),
    PREBUILD_RECONCILE_INTERVAL_SECONDS: '1',
  }),
);

const passes = (replica: Replica): number =>
  replica.service.lines().filter((l) => l.msg === 'schedules: pass done' && l.pass === 'reconcile').length;

test.before(async () => {
  repo = await pushedRepo('pb-replicas');
  await repo.push('main', { 'README.md': 'no definition: no configured branch builds\n' });
  writeFileSync(
    configurations,
    JSON.stringify([
      {
        repository: repo.url,
        branches: ['release/*'],
        image: { registry: stack.REGISTRY_ANON, name: 'it/prebuild-replicas' },
      },
    ]),
  );
});

test.after.always(async () => {
  await repo?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

for (const kind of REDIS_KINDS) {
  test.serial(
    `${kind}: the schedules run on one replica; losing it moves them to the other within a minute`,
    async (t) => {
      const { replicas } = await replicasOn(kind);
      const holder = await eventually(
        () => replicas.find((r) => r.service.lines().some((l) => l.msg === RUNS)),
        {
          timeout: 60_000,
          interval: 100,
          what: 'a replica to take the schedules',
        },
      );
      const other = replicas.find((r) => r !== holder) as Replica;
      // Several reconcile passes on the holder, none on the other.
      await eventually(() => passes(holder) >= 3, {
        timeout: 120_000,
        interval: 100,
        what: 'three reconcile passes',
      });
      t.is(passes(other), 0);
      t.false(other.service.lines().some((l) => l.msg === RUNS));

      await holder.service.lose();
      const ms = await within('the other replica to take the schedules', 60_000, () =>
        Promise.resolve(other.service.lines().some((l) => l.msg === RUNS)),
      );
      t.log(`schedules moved after ${ms} ms`);
      await eventually(() => passes(other) >= 1, {
        timeout: 60_000,
        interval: 100,
        what: 'a reconcile pass on the other',
      });
    },
  );
}
