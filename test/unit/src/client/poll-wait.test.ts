import test from 'ava';
import { FIRST_WAIT_SECONDS, MIN_WAIT_SECONDS, PollWait } from '../../../../src/client/poll-wait.js';

test('polls start under 30 s and shrink to fit a front that cuts idle connections at 8 s', (t) => {
  const waits = new PollWait();
  t.true(FIRST_WAIT_SECONDS < 30);
  t.is(waits.seconds, FIRST_WAIT_SECONDS);
  waits.timedOut(waits.seconds, 8_003);
  t.is(waits.seconds, 6, 'three quarters of the 8 s the front held the poll');
  waits.timedOut(6, 6_100);
  t.is(waits.seconds, 6, 'a cut after the wait ran out says nothing about the front');
});

test('a connection lost at once is a lost peer, not an idle cut; a lost one held a while is', (t) => {
  const waits = new PollWait();
  waits.lost(waits.seconds, 40);
  t.is(waits.seconds, FIRST_WAIT_SECONDS);
  waits.lost(waits.seconds, 8_000);
  t.is(waits.seconds, 6);
});

test('never below the shortest wait, and always shorter than the wait that was cut', (t) => {
  const waits = new PollWait();
  waits.timedOut(waits.seconds, 900);
  t.is(waits.seconds, MIN_WAIT_SECONDS);
  const other = new PollWait();
  other.timedOut(other.seconds, 24_900);
  t.is(other.seconds, 18);
});
