// The branches the prebuild passes read (workers/prebuilds/branch-listing.ts): the reconcile
// reads every time; the refresh reuses a read younger than the reconcile interval, else reads.
import test from 'ava';
import { BranchListing } from '../../../../workers/prebuilds/branch-listing.js';

function listing(maxAgeMs: number): { listing: BranchListing; reads: number[]; clock: { ms: number } } {
  const reads: number[] = [];
  const clock = { ms: 1_000 };
  const read = (index: number) => {
    reads.push(index);
    return Promise.resolve(new Map([['main', `head-${index}-${reads.length}`]]));
  };
  return { listing: new BranchListing(read, maxAgeMs, () => clock.ms), reads, clock };
}

test('fresh reads every time; recent answers the last read while it is younger than the age', async (t) => {
  const { listing: branches, reads, clock } = listing(300_000);
  t.deepEqual([...(await branches.fresh(0))], [['main', 'head-0-1']]);
  t.deepEqual([...(await branches.fresh(0))], [['main', 'head-0-2']]);
  clock.ms += 299_999;
  t.deepEqual([...(await branches.recent(0))], [['main', 'head-0-2']], 'the last read, not a new one');
  t.deepEqual(reads, [0, 0]);
  clock.ms += 1;
  t.deepEqual([...(await branches.recent(0))], [['main', 'head-0-3']], 'as old as the age: read again');
  t.deepEqual([...(await branches.recent(0))], [['main', 'head-0-3']]);
  t.deepEqual(reads, [0, 0, 0]);
});

test('each repository has its own read; one never read is read by recent', async (t) => {
  const { listing: branches, reads } = listing(300_000);
  await branches.fresh(0);
  t.deepEqual([...(await branches.recent(1))], [['main', 'head-1-2']]);
  t.deepEqual([...(await branches.recent(0))], [['main', 'head-0-1']]);
  t.deepEqual(reads, [0, 1]);
});

test('a read is as old as the moment it was asked, and a failed read is not kept', async (t) => {
  const clock = { ms: 0 };
  let fail = false;
  const read = async () => {
    clock.ms += 10_000; // the read itself takes 10 s
    if (fail) throw new Error('the forge did not answer');
    return new Map([['main', 'a']]);
  };
  const branches = new BranchListing(read, 15_000, () => clock.ms);
  await branches.fresh(0);
  clock.ms += 5_000; // 15 s after the read was asked, 5 s after it answered
  fail = true;
  await t.throwsAsync(() => branches.recent(0), { message: 'the forge did not answer' });
  await t.throwsAsync(() => branches.recent(0), { message: 'the forge did not answer' });
});
