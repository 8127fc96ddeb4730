/**
 * /ui/builds/<id>: one build's record as a page: its status and answer, the stage timeline, the
 * BuildKit steps (cached or run, with durations), the pushed image and its sizes, the build key's
 * inputs and why it was rebuilt (file by file), its logs followed live, and Cancel while it runs.
 */
import { ApiError, call, callerOf, getJson, statusOf, type Build } from './api.js';
import { bytes, duration, fields, h, replace, table, when, type Child } from './dom.js';
import { followLog, poll } from './live.js';
import { LogView } from './log-view.js';
import { statusBadge } from './builds-page.js';
import { rebuiltView } from './rebuilt-view.js';

/** How often a running build's record is asked again. */
const RECORD_POLL_MS = 1000;

function section(title: string, ...children: Child[]): HTMLElement {
  return h('section', { class: 'panel', 'aria-label': title }, h('h2', {}, title), ...children);
}

function timeline(build: Build): HTMLElement | undefined {
  const stages = build.stages ?? [];
  if (stages.length === 0) return undefined;
  const t0 = Date.parse(build.startedAt);
  const total = Math.max(1, ...stages.map((s) => Date.parse(s.startedAt) - t0 + (s.durationMs ?? 0)));
  const bars = stages.map((stage) => {
    const bar = h('span', { class: 'bar' });
    bar.style.marginLeft = `${((Date.parse(stage.startedAt) - t0) / total) * 100}%`;
    bar.style.width = `${Math.max(0.5, ((stage.durationMs ?? 0) / total) * 100)}%`;
    const took = stage.durationMs === undefined ? 'running' : duration(stage.durationMs / 1000);
    return h('li', {}, h('span', { class: 'stage' }, stage.name), h('span', { class: 'track' }, bar), took);
  });
  return section('Stages', h('ol', { class: 'timeline' }, ...bars));
}

function stepsPanel(build: Build): HTMLElement | undefined {
  const steps = build.steps ?? [];
  if (steps.length === 0) return undefined;
  const total = build.totalSteps ?? steps.length;
  const cached = build.cachedSteps ?? steps.filter((s) => s.cached).length;
  const share = total === 0 ? 0 : Math.round((cached / total) * 100);
  return section(
    'Steps',
    h('p', { class: 'summary' }, `Build steps: ${cached}/${total} cached (${share}%)`),
    table(
      ['Step', '', 'Duration', 'Error'],
      steps.map((step) => [
        h(
          'span',
          {},
          h('code', {}, step.name),
          step.stage === undefined ? undefined : h('span', { class: 'step-stage' }, ` ${step.stage}`),
        ),
        h('span', { class: `badge ${step.cached ? 'cached' : 'ran'}` }, step.cached ? 'cached' : 'ran'),
        step.durationMs === undefined ? '' : duration(step.durationMs / 1000),
        step.error,
      ]),
    ),
  );
}

function imagePanel(build: Build): HTMLElement | undefined {
  if (build.pushed === undefined) return undefined;
  return section(
    'Image',
    fields([
      ['Reference', build.image],
      ['Digest', h('code', {}, build.pushed.digest)],
    ]),
    table(
      ['Platform', 'Compressed size', 'Manifest'],
      build.pushed.platforms.map((p) => [p.platform, bytes(p.compressedBytes), h('code', {}, p.digest)]),
    ),
  );
}

function keyPanel(build: Build): HTMLElement | undefined {
  const reasons = build.rebuiltBecause === undefined ? undefined : rebuiltView(build.rebuiltBecause);
  if (build.key === undefined && reasons === undefined) return undefined;
  const inputs =
    build.key === undefined
      ? undefined
      : table(
          ['Input', 'Digest'],
          build.key.inputs.map((i) => [h('code', {}, i.name), h('code', {}, i.digest)]),
        );
  return section(
    'Build key',
    build.key === undefined ? undefined : h('p', {}, h('code', {}, build.key.key)),
    reasons,
    inputs,
  );
}

function summary(build: Build): HTMLElement {
  const builders = build.builders?.map((x) => `${x.builder} (${x.platforms.join(', ')})`).join('; ');
  return fields([
    ['Repository', h('span', { class: 'repo' }, build.repository)],
    ['Branch', build.branch],
    ['Commit', build.commit === undefined ? undefined : h('code', {}, build.commit)],
    ['Image', build.image],
    ['Trigger', build.trigger ?? 'api'],
    ['Caller', callerOf(build)],
    ['Request', build.requestId],
    ['Started', when(build.startedAt)],
    [
      build.status === undefined ? 'Running for' : 'Took',
      duration(build.durationSeconds ?? build.elapsedSeconds),
    ],
    ['Builder', builders ?? build.builder],
    ['Error', build.error === undefined ? undefined : h('span', { class: 'error' }, build.error)],
  ]);
}

/** DELETE /builds/{id}; the next poll shows how the build ended. */
function cancelButton(build: Build): HTMLElement | undefined {
  if (build.status !== undefined) return undefined;
  const button = h('button', { type: 'button', class: 'danger', 'data-action': 'cancel' }, 'Cancel');
  button.addEventListener('click', () => {
    button.setAttribute('disabled', '');
    call(`/builds/${encodeURIComponent(build.id)}`, { method: 'DELETE' })
      .then(() => {
        button.textContent = 'Cancelling';
      })
      .catch((err: unknown) => {
        button.removeAttribute('disabled');
        button.title = err instanceof Error ? err.message : String(err);
      });
  });
  return button;
}

function draw(parts: Parts, build: Build): void {
  replace(
    parts.head,
    h('h1', {}, 'Build ', h('code', {}, build.id)),
    statusBadge(build),
    cancelButton(build),
  );
  const answer =
    build.answer === undefined
      ? undefined
      : section('Answer', h('pre', { class: 'answer' }, JSON.stringify(build.answer.body, null, 2)));
  replace(
    parts.record,
    summary(build),
    timeline(build),
    stepsPanel(build),
    imagePanel(build),
    keyPanel(build),
    answer,
  );
}

interface Parts {
  readonly head: HTMLElement;
  readonly record: HTMLElement;
  readonly logs: HTMLElement;
}

/** Follows the log `id` into a new view in `parts.logs`. */
function follow(parts: Parts, title: string, id: string, signal: AbortSignal): void {
  const view = new LogView(title);
  parts.logs.appendChild(section(title, view.element));
  followLog(id, signal, (text) => view.append(text)).catch((err: unknown) => {
    if (!signal.aborted) view.append(`\n[${err instanceof Error ? err.message : String(err)}]\n`);
  });
}

export async function buildPage(root: HTMLElement, signal: AbortSignal, id: string): Promise<void> {
  const parts: Parts = {
    head: h('header', { class: 'build-head' }),
    record: h('div', { class: 'record' }),
    logs: h('div', { class: 'logs' }),
  };
  replace(root, parts.head, parts.record, parts.logs);
  const following = new Set<string>();
  let seen = '';
  await poll(signal, RECORD_POLL_MS, async () => {
    let build: Build;
    try {
      build = await getJson<Build>(`/builds/${encodeURIComponent(id)}`, signal);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        replace(root, h('p', { class: 'empty' }, `No build ${id} is known (or it is not yours to read).`));
        return false;
      }
      throw err;
    }
    const text = JSON.stringify(build);
    if (text !== seen) draw(parts, build);
    seen = text;
    for (const [title, logId] of [
      ['Clone log', build.gitCloneLogId],
      ['Build log', build.imageBuildLogId],
    ] as const) {
      if (logId === undefined || following.has(logId)) continue;
      following.add(logId);
      follow(parts, title, logId, signal);
    }
    return statusOf(build) === 'running';
  });
}
