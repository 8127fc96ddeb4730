/**
 * A build's BuildKit steps as its record lists them, on the real stack (git, the Dev Containers
 * CLI, BuildKit, a registry): a 6-instruction Dockerfile (two COPYs among them) lists six steps,
 * each once, each with a duration, named without the CLI's stage label; a second build of the same
 * commit without reuse answers every step from the cache, each with 0 ms. A named stage of the
 * repository's Dockerfile stays as the step's `stage`.
 */
import { randomBytes } from 'node:crypto';
import test from 'ava';
import { httpsCreds, stack, startBuildAppFor, uniqueName } from '../helpers/build-support.js';
import { builtRecord } from '../helpers/built-record.js';
import { testRepo } from '../helpers/reuse-support.js';

/** A folder of this run's own: every step after the FROM is this build's alone on the builder. */
const APP = `/app-${randomBytes(4).toString('hex')}`;

const SIX = [
  `FROM ${stack.BASE_IMAGE_ANON}`,
  `WORKDIR ${APP}`,
  `COPY app.txt ${APP}/app.txt`,
  `RUN cat ${APP}/app.txt > /one`,
  `COPY extra.txt ${APP}/extra.txt`,
  `RUN cat ${APP}/app.txt ${APP}/extra.txt > /both`,
  '',
].join('\n');

// One build at a time: BuildKit names a vertex two builds share as the first of them named it.
test.serial(
  'a 6-instruction Dockerfile: six steps, each once and timed, named without the CLI stage label',
  async (t) => {
    const app = await startBuildAppFor(t);
    const repo = await testRepo('steps');
    t.teardown(repo.dispose);
    await repo.commit({
      '.devcontainer/devcontainer.json': JSON.stringify({
        build: { dockerfile: 'Dockerfile', context: '..' },
      }),
      '.devcontainer/Dockerfile': SIX,
      'app.txt': `app ${uniqueName('x')}\n`,
      'extra.txt': 'extra\n',
    });
    const body = {
      repository: repo.url,
      gitCredentials: httpsCreds(),
      image: { registry: stack.REGISTRY_ANON, name: uniqueName('steps') },
    };
    const first = (await builtRecord(t, app, body)).record;
    const instructions = SIX.trim().split('\n');
    const names = first.steps?.map((step) => step.name) ?? [];
    // Steps are listed as they started. The FROM's vertex is shared by every build of the same
    // base on the builder (named as the first of them named it), and the CLI pins it by digest.
    // A build running beside it on the builder may add the same vertex under its own numbering.
    const from = names.filter((name) => / FROM /.test(name));
    t.true(from.length >= 1, names.join('\n'));
    for (const name of from) t.regex(name, /^\[\d+\/\d+\] FROM \S+\/dev\/base:1@sha256:[0-9a-f]{64}$/);
    t.deepEqual(
      names.filter((name) => !/ FROM /.test(name)).sort(),
      instructions.slice(1).map((line, i) => `[${i + 2}/6] ${line}`),
      JSON.stringify(first.steps, null, 1),
    );
    // Counted as listed: the FROM may be listed more than once (another build's numbering).
    t.is(first.totalSteps, first.steps?.length);
    for (const step of first.steps ?? []) {
      t.is(typeof step.durationMs, 'number', `${step.name} has durationMs`);
      t.false(step.name.includes('dev_container_auto_added_stage_label'), step.name);
      if (!step.name.includes(' FROM ')) t.is(step.stage, undefined, step.name);
    }
    // Nothing after the FROM was built before: every such step ran.
    t.deepEqual(
      first.steps?.filter((step) => !step.name.includes(' FROM ')).map((step) => step.cached),
      [false, false, false, false, false],
    );

    const again = (await builtRecord(t, app, body)).record;
    t.is(again.totalSteps, again.steps?.length);
    // BuildKit answers every instruction after the FROM from its cache (the FROM it resolves: DONE;
    // its vertex may carry the name another build on the builder gave it, as in the first build).
    const afterFrom = again.steps?.filter((step) => !/ FROM /.test(step.name)) ?? [];
    t.is(afterFrom.length, 5, JSON.stringify(again.steps, null, 1));
    t.deepEqual(
      afterFrom.map((step) => [step.cached, step.durationMs]),
      afterFrom.map(() => [true, 0]),
    );
  },
);

test.serial("a named stage of the repository's Dockerfile is kept as the step's stage", async (t) => {
  const app = await startBuildAppFor(t);
  const repo = await testRepo('steps-stage');
  t.teardown(repo.dispose);
  await repo.commit({
    '.devcontainer/devcontainer.json': JSON.stringify({ build: { dockerfile: 'Dockerfile' } }),
    '.devcontainer/Dockerfile': [
      `FROM ${stack.BASE_IMAGE_ANON} AS prepare`,
      `RUN echo ${uniqueName('x')} > /made`,
      `FROM ${stack.BASE_IMAGE_ANON}`,
      'COPY --from=prepare /made /made',
      '',
    ].join('\n'),
  });
  const { record } = await builtRecord(t, app, {
    repository: repo.url,
    gitCredentials: httpsCreds(),
    image: { registry: stack.REGISTRY_ANON, name: uniqueName('steps-stage') },
  });
  const copy = record.steps?.find((step) => step.name === '[2/2] COPY --from=prepare /made /made');
  t.truthy(copy, JSON.stringify(record.steps, null, 1));
  t.is(copy?.stage, undefined, "the definition's own stage is not named");
  const run = record.steps?.find((step) => step.name.startsWith('[2/2] RUN echo'));
  t.is(run?.stage, 'prepare', JSON.stringify(record.steps, null, 1));
  // Both FROMs name the same image: one vertex of BuildKit's (a build beside it on the builder may
  // add the same vertex under its own numbering); the two other steps are this build's own.
  const steps = record.steps ?? [];
  t.is(steps.filter((step) => !/ FROM /.test(step.name)).length, 2, JSON.stringify(steps, null, 1));
  t.true(
    steps.some((step) => / FROM /.test(step.name)),
    JSON.stringify(steps, null, 1),
  );
});
