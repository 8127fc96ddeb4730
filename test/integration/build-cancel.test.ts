/**
 * A client that goes away abandons its build: the real build (a RUN step that sleeps) is
 * cancelled, its processes are gone and its slot is free, its directory is removed,
 * it is counted `failure`, and the build log and the service log say why.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { SLOW_STEP_STARTED } from '../stack/fixtures.js';
import {
  httpsCreds,
  httpsRepo,
  postBuild,
  stack,
  startBuildAppFor,
  uniqueName,
} from '../helpers/build-support.js';
import { cmdlineOf, descendantPids } from '../helpers/processes.js';
import { eventually } from '../helpers/eventually.js';
import { metricValue } from '../helpers/metrics.js';

/** The text of the first `img-*` log under `logs` that contains `needle`, polled until it appears. */
async function waitForLogLine(logs: string, needle: string, ms = 120_000): Promise<string> {
  return eventually(
    async () => {
      for (const name of (await readdir(logs).catch(() => [] as string[])).filter((n) =>
        n.startsWith('img-'),
      )) {
        const text = await readFile(join(logs, name), 'utf8').catch(() => '');
        if (text.includes(needle)) return name;
      }
      return undefined;
    },
    { timeout: ms, interval: 50, what: `an img log with ${JSON.stringify(needle)}` },
  );
}

test('a client that disconnects cancels its slow build: slot freed, no process left, counted failure', async (t) => {
  const app = await startBuildAppFor(t, { build: { maxConcurrent: 1 } });
  const scratchDir = app.ctx.config.scratchDir;

  const client = new AbortController();
  const abandoned = fetch(`${app.url}/build`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      repository: httpsRepo('slow'),
      gitCredentials: httpsCreds(),
      image: { registry: stack.REGISTRY_ANON, name: uniqueName('cancel') },
      buildOptions: { noCache: true },
    }),
    signal: client.signal,
  }).catch((err: unknown) => err);

  // The RUN step has started (its line is in the build log) and sleeps.
  const logName = await waitForLogLine(join(scratchDir, 'logs'), SLOW_STEP_STARTED);
  const during = descendantPids().filter((pid) => cmdlineOf(pid).includes(scratchDir));
  t.true(during.length > 0, 'the build runs commands under the scratch dir');
  t.is(await metricValue(app.url, 'service_builds_in_flight'), 1);

  client.abort();
  const abortedAt = Date.now();
  t.true((await abandoned) instanceof Error);
  await eventually(async () => (await metricValue(app.url, 'service_builds_in_flight')) === 0, {
    timeout: 60_000, // room for a loaded machine; the log below says the build was cancelled
    interval: 50,
    what: 'service_builds_in_flight 0',
  });
  t.log(`slot freed ${Date.now() - abortedAt} ms after the client went away`);

  t.deepEqual(
    descendantPids().filter((pid) => during.includes(pid)),
    [],
    'no process of the build is left',
  );
  t.is(app.ctx.processGroups.size, 0);
  t.deepEqual(await readdir(join(scratchDir, 'requests')), [], 'the request directory is removed');
  t.is(await metricValue(app.url, 'service_builds_total', { status: 'failure' }), 1);
  t.regex(await readFile(join(scratchDir, 'logs', logName), 'utf8'), /cancelled: the client went away/);
  t.true(
    app.logLines().some((l) => typeof l.msg === 'string' && l.msg.includes('the client went away')),
    'the service log says the client went away',
  );

  // The slot really is free: the next build is admitted and succeeds.
  const next = await postBuild(app, {
    repository: httpsRepo('image'),
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name: uniqueName('after-cancel') },
  });
  t.is(next.status, 200, JSON.stringify(next.body));
});
