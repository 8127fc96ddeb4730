// The prebuild in flight of each branch (workers/prebuilds/slots.ts): latest push wins, and a
// build's end frees only the slot it still holds.
import test from 'ava';
import { BranchSlots } from '../../../../workers/prebuilds/slots.js';

const slot = (buildId: string, commit = 'c') => ({ buildId, commit, deliveryId: `dlv-${buildId}` });

test('a build that ends frees its slot once; a replaced build frees nothing', (t) => {
  const slots = new BranchSlots();
  t.is(slots.take('0:main', slot('bld-1')), undefined);
  t.is(slots.take('1:main', slot('bld-2')), undefined);
  t.is(slots.take('0:main', slot('bld-3'))?.buildId, 'bld-1', 'the new head replaces the build in flight');
  t.is(slots.end('bld-1'), undefined, 'the replaced build holds no slot');
  t.is(slots.get('0:main')?.buildId, 'bld-3');
  t.is(slots.end('bld-3'), '0:main');
  t.is(slots.get('0:main'), undefined);
  t.is(slots.end('bld-3'), undefined, 'freed once');
  t.is(slots.get('1:main')?.buildId, 'bld-2', 'other branches keep theirs');
});

test('2,000 branches in flight: each end frees its own slot', (t) => {
  const slots = new BranchSlots();
  for (let i = 0; i < 2000; i += 1) slots.take(`${i}:main`, slot(`bld-${i}`));
  for (let i = 1999; i >= 0; i -= 2) t.is(slots.end(`bld-${i}`), `${i}:main`);
  const held = Array.from({ length: 2000 }, (_, i) => slots.get(`${i}:main`)?.buildId);
  t.deepEqual(
    held,
    Array.from({ length: 2000 }, (_, i) => (i % 2 === 0 ? `bld-${i}` : undefined)),
  );
});
