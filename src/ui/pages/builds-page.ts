/**
 * /ui/: the builds, newest first, as GET /builds lists them (only those the caller may read),
 * with filters kept in the address, polled so that a new build shows and a running one moves on
 * without a reload.
 */
import { callerOf, getJson, statusOf, type Build } from './api.js';
import { duration, h, replace, table, when } from './dom.js';
import { poll } from './live.js';
import { buildCards } from './build-cards.js';

const FILTERS = ['status', 'repository', 'branch', 'trigger', 'caller'] as const;
type Filter = (typeof FILTERS)[number];
type Filters = Partial<Record<Filter, string>>;

const STATUSES = ['queued', 'running', 'success', 'failure', 'invalid_request'];
const TRIGGERS = ['api', 'push', 'reconcile', 'refresh'];

/** How often the list is asked again (a new build shows within this and one answer). */
export const LIST_POLL_MS = 1000;

function readFilters(): Filters {
  const query = new URLSearchParams(location.search);
  const out: Filters = {};
  for (const name of FILTERS) {
    const value = query.get(name);
    if (value !== null && value !== '') out[name] = value;
  }
  return out;
}

function matches(build: Build, filters: Filters): boolean {
  const contains = (value: string | undefined, part: string | undefined): boolean =>
    part === undefined || (value ?? '').toLowerCase().includes(part.toLowerCase());
  return (
    (filters.status === undefined || statusOf(build) === filters.status) &&
    (filters.trigger === undefined || (build.trigger ?? 'api') === filters.trigger) &&
    contains(build.repository, filters.repository) &&
    contains(build.branch, filters.branch) &&
    contains(callerOf(build), filters.caller)
  );
}

function select(name: Filter, label: string, options: readonly string[], value?: string): HTMLElement {
  const el = h('select', { name, 'aria-label': label }, h('option', { value: '' }, `${label}: all`));
  for (const option of options) el.appendChild(h('option', { value: option }, option));
  el.value = value ?? '';
  return el;
}

function filterForm(filters: Filters, onChange: (next: Filters) => void): HTMLFormElement {
  const text = (name: Filter, label: string): HTMLElement =>
    h('input', { type: 'search', name, placeholder: label, 'aria-label': label, value: filters[name] ?? '' });
  const form = h(
    'form',
    { class: 'filters', role: 'search' },
    select('status', 'Status', STATUSES, filters.status),
    text('repository', 'Repository'),
    text('branch', 'Branch'),
    select('trigger', 'Trigger', TRIGGERS, filters.trigger),
    text('caller', 'Caller'),
  );
  const changed = (): void => {
    const data = new FormData(form);
    const next: Filters = {};
    for (const name of FILTERS) {
      const value = data.get(name);
      if (typeof value === 'string' && value !== '') next[name] = value;
    }
    const query = new URLSearchParams(next as Record<string, string>).toString();
    history.replaceState(null, '', `/ui/${query === '' ? '' : `?${query}`}`);
    onChange(next);
  };
  form.addEventListener('input', changed);
  form.addEventListener('submit', (event) => event.preventDefault());
  return form;
}

export function statusBadge(build: Build): HTMLElement {
  const status = statusOf(build);
  return h('span', { class: `badge ${status}` }, status === 'running' ? build.phase : status);
}

function rows(builds: readonly Build[]): HTMLElement {
  if (builds.length === 0) return h('p', { class: 'empty' }, 'No build matches.');
  return h('div', {}, buildTable(builds), buildCards(builds, statusBadge));
}

function buildTable(builds: readonly Build[]): HTMLElement {
  return table(
    ['Build', 'Status', 'Repository', 'Branch', 'Trigger', 'Caller', 'Started', 'Duration', 'Steps'],
    builds.map((build) => [
      h('a', { href: `/ui/builds/${encodeURIComponent(build.id)}`, 'data-build': build.id }, build.id),
      statusBadge(build),
      h('span', { class: 'repo' }, build.repository),
      build.branch,
      build.trigger ?? 'api',
      callerOf(build),
      when(build.startedAt),
      duration(build.durationSeconds ?? build.elapsedSeconds),
      build.totalSteps === undefined ? '' : `${build.cachedSteps ?? 0}/${build.totalSteps} cached`,
    ]),
  );
}

export async function buildsPage(root: HTMLElement, signal: AbortSignal): Promise<void> {
  let filters = readFilters();
  let builds: Build[] | undefined;
  let seen = '';
  const list = h('div', { class: 'builds', 'aria-busy': 'true' });
  const draw = (): void => {
    if (builds === undefined) return;
    replace(list, rows(builds.filter((b) => matches(b, filters))));
    list.setAttribute('aria-busy', 'false');
  };
  const form = filterForm(filters, (next) => {
    filters = next;
    draw();
  });
  replace(root, h('h1', {}, 'Builds'), form, list);
  await poll(signal, LIST_POLL_MS, async () => {
    const res = await getJson<{ builds: Build[] }>('/builds', signal);
    const text = JSON.stringify(res.builds);
    if (text === seen) return;
    seen = text;
    builds = res.builds;
    draw();
  });
}
