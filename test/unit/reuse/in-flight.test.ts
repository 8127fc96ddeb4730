import test from 'ava';
import { createInProcessInFlight } from '../../../workers/reuse/in-flight.js';

test('a build is found under its keys until it settles; joiners get its result', async (t) => {
  const inFlight = createInProcessInFlight<string>();
  const lead = inFlight.start('req:a');
  t.truthy(lead);
  t.is(inFlight.start('req:a'), undefined, 'a taken key is not started twice');
  t.true(lead!.alias('key:k'));
  t.is(inFlight.find('key:k'), lead);
  const joined = inFlight.find('req:a');
  const waiter = joined!.join();
  t.truthy(waiter);
  lead!.setCommit('c0ffee');
  t.is(await joined!.commit, 'c0ffee');
  lead!.settle({ ok: true, value: 'image@sha256:1' });
  t.is(await joined!.result, 'image@sha256:1');
  t.is(inFlight.find('req:a'), undefined);
  t.is(inFlight.find('key:k'), undefined);
  t.is(inFlight.size, 0);
  t.truthy(lead!.join(), 'a settled build still answers a late joiner');
  const abandoned = inFlight.start('req:b')!;
  abandoned.waiter.leave();
  t.is(abandoned.join(), undefined, 'an abandoned build takes no new waiter');
});

test('the build is aborted only when its last waiter has gone', (t) => {
  const inFlight = createInProcessInFlight<string>();
  const lead = inFlight.start('req:a')!;
  const w2 = lead.join()!;
  const w3 = lead.join()!;
  lead.waiter.leave();
  w2.leave();
  w2.leave(); // idempotent
  t.false(lead.signal.aborted);
  w3.leave();
  t.true(lead.signal.aborted);
  t.is(inFlight.find('req:a'), undefined, 'an abandoned build is no longer joinable');
});

test('a failed build rejects its joiners, and its commit resolves undefined when never set', async (t) => {
  const inFlight = createInProcessInFlight<string>();
  const lead = inFlight.start('x')!;
  const joined = inFlight.find('x')!;
  lead.settle({ ok: false, error: new Error('boom') });
  await t.throwsAsync(joined.result, { message: 'boom' });
  t.is(await joined.commit, undefined);
});
