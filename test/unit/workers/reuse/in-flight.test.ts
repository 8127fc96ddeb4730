import test from 'ava';
import { createInProcessInFlight } from '../../../../workers/reuse/in-flight.js';

test('a build is found under its keys until it settles; followers get its result', async (t) => {
  const inFlight = createInProcessInFlight<string>();
  const owned = inFlight.start('req:a');
  t.truthy(owned);
  t.is(inFlight.start('req:a'), undefined, 'a taken key is not started twice');
  t.true(owned!.alias('key:k'));
  t.is(inFlight.find('key:k'), owned);
  const followed = inFlight.find('req:a');
  const waiter = followed!.follow();
  t.truthy(waiter);
  owned!.setCommit('c0ffee');
  t.is(await followed!.commit, 'c0ffee');
  owned!.settle({ ok: true, value: 'image@sha256:1' });
  t.is(await followed!.result, 'image@sha256:1');
  t.is(inFlight.find('req:a'), undefined);
  t.is(inFlight.find('key:k'), undefined);
  t.is(inFlight.size, 0);
  t.truthy(owned!.follow(), 'a settled build still answers a late follower');
  const abandoned = inFlight.start('req:b')!;
  abandoned.waiter.leave();
  t.is(abandoned.follow(), undefined, 'an abandoned build takes no new waiter');
});

test('the build is aborted only when its last waiter has gone', (t) => {
  const inFlight = createInProcessInFlight<string>();
  const owned = inFlight.start('req:a')!;
  const w2 = owned.follow()!;
  const w3 = owned.follow()!;
  owned.waiter.leave();
  w2.leave();
  w2.leave(); // idempotent
  t.false(owned.signal.aborted);
  w3.leave();
  t.true(owned.signal.aborted);
  t.is(inFlight.find('req:a'), undefined, 'an abandoned build is no longer followable');
});

test('a failed build rejects its followers, and its commit resolves undefined when never set', async (t) => {
  const inFlight = createInProcessInFlight<string>();
  const owned = inFlight.start('x')!;
  const followed = inFlight.find('x')!;
  owned.settle({ ok: false, error: new Error('boom') });
  await t.throwsAsync(followed.result, { message: 'boom' });
  t.is(await followed.commit, undefined);
});
