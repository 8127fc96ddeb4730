/**
 * An image of a registry with a namespace path (`<registry>/org` + a name) is named the same way by
 * every event about it: two real builds on main publish two images (artifact.published), a retention
 * run deletes the older one (image.deleted), and both events give the registry with its namespace
 * path, the name and `<registry>/org/<name>@<digest>`, as the build answered them.
 */
import test from 'ava';
import type { RunningApp } from '../helpers/app.js';
import {
  fetchLog,
  httpsCreds,
  postBuild,
  stack,
  startBuildApp,
  uniqueName,
} from '../helpers/build-support.js';
import { eventually } from '../helpers/eventually.js';
import { newSecret, startReceiver, type EventReceiver } from '../helpers/event-receiver.js';
import { pushedRepo, type PushedRepo } from '../helpers/pushed-repo.js';
import { keyedDefinition } from '../helpers/retention-support.js';
import type { RetentionAnswer } from '../../src/retention/answer.js';
import { ARTIFACT_PUBLISHED, IMAGE_DELETED } from '../../src/rules/event-types.js';

const cleanups: Array<() => Promise<void>> = [];
test.after.always(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

async function build(app: RunningApp, repo: PushedRepo, registry: string, name: string) {
  const res = await postBuild(app, {
    repository: repo.url,
    gitCredentials: httpsCreds(),
    branch: 'main',
    image: { registry, name },
  });
  if (res.status !== 200) {
    const log = await fetchLog(app, res.body.logId);
    throw new Error(`POST /build answered ${res.status} ${JSON.stringify(res.body)}\n${log.text}`);
  }
  return { tag: String(res.body.tag), digest: String(res.body.digest) };
}

const customData = (receiver: EventReceiver, type: string): Record<string, unknown>[] =>
  receiver.received
    .filter((r) => r.event.type === type)
    .map((r) => ({
      subject: r.event.subject,
      ...(r.event.data as { customData?: Record<string, unknown> }).customData,
    }));

test('image.deleted names an image of a namespaced registry as artifact.published does', async (t) => {
  const secret = newSecret();
  const receiver = await startReceiver([secret]);
  cleanups.push(() => receiver.close());
  const app = await startBuildApp({
    events: {
      subscriptions: [{ name: 'all', url: receiver.url, secrets: [secret] }],
      retrySeconds: [1, 1, 1],
    },
    retention: {
      mode: 'delete',
      keepPerBranch: 1,
      keepServedDays: 0,
      keepTags: [],
      intervalMinutes: 60,
      repositories: [],
    },
  });
  cleanups.push(app.close);
  const repo = await pushedRepo('events-names');
  cleanups.push(repo.dispose);
  const registry = `${stack.REGISTRY_ANON}/org`;
  const name = uniqueName('events-names');

  await repo.push('main', { ...keyedDefinition(), 'README.md': 'one\n' });
  const older = await build(app, repo, registry, name);
  await repo.push('main', { 'README.md': 'two\n' });
  await build(app, repo, registry, name);

  const run = await fetch(`${app.url}/retention/run`, { method: 'POST' });
  t.is(run.status, 200);
  const answer = (await run.json()) as RetentionAnswer;
  const repository = answer.repositories.find((r) => r.repository === `${registry}/${name}`);
  t.is(repository?.images.find((i) => i.tag === older.tag)?.outcome, 'deleted', JSON.stringify(answer));

  await eventually(() => customData(receiver, IMAGE_DELETED).length >= 1, { what: 'image.deleted' });
  await eventually(() => customData(receiver, ARTIFACT_PUBLISHED).length >= 2, {
    what: 'artifact.published',
  });
  const published = customData(receiver, ARTIFACT_PUBLISHED).find((data) => data.tag === older.tag);
  const deleted = customData(receiver, IMAGE_DELETED).find((data) => data.tag === older.tag);
  t.like(published, { registry, name, digest: older.digest });
  t.like(deleted, { registry, name, digest: older.digest, subject: `${registry}/${name}@${older.digest}` });
});
