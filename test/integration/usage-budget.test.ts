/**
 * Monthly budgets on the real stack (docs/usage.md): a tenant whose month reached its build
 * minutes gets 429 TENANT_BUDGET with Retry-After to the month's end for a build that would run
 * BuildKit, while its reuses still answer 200 and another tenant builds; the warning and exceeded
 * events arrive once each, signed.
 */
import { randomBytes } from 'node:crypto';
import test from 'ava';
import { BUDGET_EXCEEDED, BUDGET_WARNING } from '../../src/rules/event-types.js';
import { monthBounds } from '../../src/usage/buckets.js';
import { httpsCreds, postBuild, stack, startBuildApp, uniqueName } from '../helpers/build-support.js';
import { eventually } from '../helpers/eventually.js';
import { newSecret, startReceiver } from '../helpers/event-receiver.js';
import { metricValue } from '../helpers/metrics.js';
import { pushedRepo, type PushedRepo } from '../helpers/pushed-repo.js';

const hex = (): string => randomBytes(4).toString('hex');
const definition = (line: string): Record<string, string> => ({
  '.devcontainer/devcontainer.json': JSON.stringify({ build: { dockerfile: 'Dockerfile' } }),
  '.devcontainer/Dockerfile': `FROM ${stack.BASE_IMAGE_ANON}\nRUN echo ${line} > /budget\n`,
});

test('a tenant past its budget: 429 for a build, 200 for a reuse, others unaffected, signed events', async (t) => {
  const owners = { capped: `budget-a-${hex()}`, free: `budget-b-${hex()}` };
  const secret = newSecret();
  const receiver = await startReceiver([secret]);
  t.teardown(() => receiver.close());
  const app = await startBuildApp({
    build: {
      reuse: true,
      // 0.3 s a month: the first build reaches it; a named tenant's metrics keep its name.
      quotas: [{ tenant: owners.capped, monthlyBuildMinutes: 0.005, warnAtPercent: 50 }],
    },
    events: { subscriptions: [{ name: 'budgets', url: receiver.url, secrets: [secret] }], retrySeconds: [1] },
  });
  t.teardown(app.close);
  const repos: Record<keyof typeof owners, PushedRepo> = {
    capped: await pushedRepo('budget', { owner: owners.capped }),
    free: await pushedRepo('budget', { owner: owners.free }),
  };
  for (const repo of Object.values(repos)) t.teardown(repo.dispose);
  const body = (repo: PushedRepo) => ({
    repository: repo.url,
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name: uniqueName('budget') },
  });
  const capped = body(repos.capped);

  // Under the budget: it builds, and its run time reaches the budget.
  await repos.capped.push('main', definition(hex()));
  t.is((await postBuild(app, capped)).status, 200);
  // A commit outside the inputs: reused, still answered.
  await repos.capped.push('main', { 'README.md': `# ${hex()}\n` });
  const reused = await postBuild(app, capped);
  t.is(reused.status, 200, JSON.stringify(reused.body));
  // A change of the inputs would build: refused until the month ends.
  await repos.capped.push('main', definition(hex()));
  const refused = await postBuild(app, capped);
  t.is(refused.status, 429);
  t.regex(String(refused.body.error), new RegExp(`^tenant ${owners.capped} used its 0.005 build minutes`));
  const retryAfter = Number(refused.headers.get('retry-after'));
  const toMonthEnd = (monthBounds(Date.now()).end - Date.now()) / 1000;
  t.true(Math.abs(retryAfter - toMonthEnd) < 60, `Retry-After ${retryAfter}, month ends in ${toMonthEnd} s`);

  // Another tenant, under no budget, still builds.
  await repos.free.push('main', definition(hex()));
  t.is((await postBuild(app, body(repos.free))).status, 200);

  // The events: a warning and an exceeded for the capped tenant, once each, signed.
  const budgetEvents = () =>
    receiver.received.filter((r) => [BUDGET_WARNING, BUDGET_EXCEEDED].includes(r.event.type));
  await eventually(() => budgetEvents().length >= 2, { timeout: 30_000, what: 'the budget events' });
  const events = budgetEvents();
  t.deepEqual(events.map((r) => r.event.type).sort(), [BUDGET_EXCEEDED, BUDGET_WARNING].sort());
  for (const received of events) {
    t.deepEqual(received.verified, [true]);
    t.is(received.event.subject, owners.capped);
    t.like((received.event.data as { customData: Record<string, unknown> }).customData, {
      tenant: owners.capped,
      monthlyBuildMinutes: 0.005,
      warnAtPercent: 50,
    });
  }
  t.is(
    (await metricValue(app.url, 'service_tenant_budget_used_ratio', { tenant: owners.capped })) >= 1,
    true,
  );
  t.is(
    await metricValue(app.url, 'service_tenant_builds_total', { tenant: owners.capped, outcome: 'reused' }),
    1,
  );
});
