/**
 * /ui/: the builds, newest first, a page at a time as GET /builds answers them (only those the
 * caller may read; filters kept in the address and applied by the service), kept live by the
 * change feed (GET /builds/events): a changed build is read again and drawn in place, a new one
 * that belongs on the page shows at its place; "More" reads the next page.
 */
import { callerOf, getJson, statusOf, type Build } from './api.js';
import { followChanges, type Change } from './changes.js';
import { duration, h, replace, table, when } from './dom.js';
import { pause } from './live.js';
import { buildCards } from './build-cards.js';
import { BUILD_TRIGGERS } from '../../rules/build-classes.js';

const FILTERS = ['status', 'repository', 'branch', 'trigger', 'caller', 'tenant'] as const;
type Filter = (typeof FILTERS)[number];
type Filters = Partial<Record<Filter, string>>;

/** The status filter's choices: a build not finished, then how one ended (checked against docs/openapi.yaml). */
const STATUSES = ['queued', 'running', 'success', 'failure', 'invalid_request'];

/** Builds per page. */
const PAGE_SIZE = 50;
/** Changes heard within this are read together. */
const CHANGES_MS = 250;

function readFilters(): Filters {
  const query = new URLSearchParams(location.search);
  const out: Filters = {};
  for (const name of FILTERS) {
    const value = query.get(name);
    if (value !== null && value !== '') out[name] = value;
  }
  return out;
}

/** Whether a build read on its own belongs in the list (as the service's filters decide). */
function matches(build: Build, filters: Filters): boolean {
  return (
    (filters.status === undefined || statusOf(build) === filters.status) &&
    (filters.trigger === undefined || (build.trigger ?? 'api') === filters.trigger) &&
    (filters.repository === undefined || build.repository === filters.repository) &&
    (filters.branch === undefined || build.branch === filters.branch) &&
    (filters.caller === undefined || build.requestedBy?.subject === filters.caller) &&
    (filters.tenant === undefined || build.tenant === filters.tenant)
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
    select('trigger', 'Trigger', BUILD_TRIGGERS, filters.trigger),
    text('caller', 'Caller'),
    text('tenant', 'Tenant'),
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

/** A running build's elapsed time, moved on from when it was read. */
function elapsed(build: Build, readAt: number): number {
  if (build.durationSeconds !== undefined) return build.durationSeconds;
  if (build.status !== undefined || build.phase === 'queued') return build.elapsedSeconds;
  return build.elapsedSeconds + (Date.now() - readAt) / 1000;
}

function rows(builds: readonly Build[], readAt: ReadonlyMap<string, number>): HTMLElement {
  if (builds.length === 0) return h('p', { class: 'empty' }, 'No build matches.');
  return h('div', {}, buildTable(builds, readAt), buildCards(builds, statusBadge));
}

function buildTable(builds: readonly Build[], readAt: ReadonlyMap<string, number>): HTMLElement {
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
      h('span', { 'data-elapsed': build.id }, duration(elapsed(build, readAt.get(build.id) ?? Date.now()))),
      build.totalSteps === undefined ? '' : `${build.cachedSteps ?? 0}/${build.totalSteps} cached`,
    ]),
  );
}

/** Newest first, as the service orders them: the later start, then the greater id. */
const newerFirst = (a: Build, b: Build): number =>
  a.startedAt === b.startedAt ? (a.id > b.id ? -1 : 1) : a.startedAt > b.startedAt ? -1 : 1;

/** The builds shown: the pages read so far, kept live build by build. */
class BuildList {
  builds: Build[] = [];
  next: string | undefined;
  readonly readAt = new Map<string, number>();
  /** Pages read beyond the first. */
  more = 0;

  constructor(
    readonly filters: Filters,
    readonly signal: AbortSignal,
  ) {}

  #query(after?: string): string {
    const query = new URLSearchParams({
      ...(this.filters as Record<string, string>),
      limit: String(PAGE_SIZE),
    });
    if (after !== undefined) query.set('after', after);
    return `/builds?${query.toString()}`;
  }

  #read(builds: readonly Build[]): void {
    const at = Date.now();
    for (const build of builds) this.readAt.set(build.id, at);
  }

  /** The first page again; the builds of later pages read so far stay, and are read again when unfinished. */
  async first(): Promise<string[]> {
    const page = await getJson<{ builds: Build[]; next?: string }>(this.#query(), this.signal);
    this.#read(page.builds);
    const last = page.builds.at(-1);
    const shown = new Set(page.builds.map((b) => b.id));
    const later =
      this.more === 0 || last === undefined
        ? []
        : this.builds.filter((b) => !shown.has(b.id) && newerFirst(last, b) < 0);
    this.builds = [...page.builds, ...later];
    if (this.more === 0 || page.next === undefined) this.next = page.next;
    return later.filter((b) => b.status === undefined).map((b) => b.id);
  }

  async loadMore(): Promise<void> {
    if (this.next === undefined) return;
    const page = await getJson<{ builds: Build[]; next?: string }>(this.#query(this.next), this.signal);
    this.#read(page.builds);
    const shown = new Set(this.builds.map((b) => b.id));
    this.builds = [...this.builds, ...page.builds.filter((b) => !shown.has(b.id))];
    this.next = page.next;
    this.more += 1;
  }

  /** Reads the builds `ids` again: drawn in place, a new one at its place when it belongs there. */
  async changed(ids: readonly string[]): Promise<void> {
    for (const id of ids) {
      let build: Build | undefined;
      try {
        build = await getJson<Build>(`/builds/${encodeURIComponent(id)}`, this.signal);
      } catch {
        build = undefined; // gone, or no longer readable
      }
      const at = this.builds.findIndex((b) => b.id === id);
      if (build === undefined || !matches(build, this.filters)) {
        if (at >= 0) this.builds.splice(at, 1);
        continue;
      }
      this.#read([build]);
      if (at >= 0) this.builds[at] = build;
      else if (this.next === undefined || newerFirst(build, this.builds.at(-1) as Build) < 0) {
        this.builds.push(build);
        this.builds.sort(newerFirst);
      }
    }
  }
}

/**
 * Shows `list` and keeps it live from the feed: the feed is opened before the first page is read,
 * so that no change falls between them; changes are gathered for CHANGES_MS, then read together.
 */
async function showLive(list: BuildList, draw: () => void): Promise<void> {
  const pending = new Set<string>();
  let reset = false;
  let wake: (() => void) | undefined;
  const heard = (change: Change): void => {
    if (change.kind === 'reset') reset = true;
    else pending.add(change.id);
    wake?.();
  };
  list.signal.addEventListener('abort', () => wake?.());
  let opened: () => void = () => undefined;
  const open = new Promise<void>((resolve) => (opened = resolve));
  const feed = followChanges(list.signal, heard, opened);
  await Promise.race([open, feed]);
  await list.first();
  draw();
  while (!list.signal.aborted) {
    if (!reset && pending.size === 0) await new Promise<void>((resolve) => (wake = resolve));
    await pause(CHANGES_MS, list.signal);
    const ids = [...pending];
    pending.clear();
    if (reset) {
      reset = false;
      ids.push(...(await list.first()));
    }
    await list.changed(ids);
    draw();
  }
  await feed;
}

export async function buildsPage(root: HTMLElement, signal: AbortSignal): Promise<void> {
  let shown = new AbortController();
  signal.addEventListener('abort', () => shown.abort());
  let list = new BuildList(readFilters(), shown.signal);
  const listEl = h('div', { class: 'builds', 'aria-busy': 'true' });
  const more = h('button', { type: 'button', class: 'more' }, 'More');
  more.hidden = true;
  const draw = (): void => {
    replace(listEl, rows(list.builds, list.readAt));
    listEl.setAttribute('aria-busy', 'false');
    more.hidden = list.next === undefined;
  };
  more.addEventListener('click', () => {
    void list.loadMore().then(draw);
  });
  let typing: ReturnType<typeof setTimeout> | undefined;
  const form = filterForm(list.filters, (next) => {
    clearTimeout(typing);
    typing = setTimeout(() => {
      shown.abort();
      shown = new AbortController();
      list = new BuildList(next, shown.signal);
      show().catch((err: unknown) => {
        replace(listEl, h('p', { class: 'error' }, err instanceof Error ? err.message : String(err)));
      });
    }, 300);
  });
  const show = async (): Promise<void> => {
    const current = list;
    listEl.setAttribute('aria-busy', 'true');
    try {
      await showLive(current, draw);
    } catch (err) {
      // Filters changed (another list is shown now), or the page was left.
      if (!current.signal.aborted) throw err;
    }
  };
  // A running build's time moves on without asking the service.
  const ticking = setInterval(() => {
    for (const build of list.builds) {
      const cell = listEl.querySelector(`[data-elapsed="${CSS.escape(build.id)}"]`);
      if (cell !== null) cell.textContent = duration(elapsed(build, list.readAt.get(build.id) ?? Date.now()));
    }
  }, 1000);
  signal.addEventListener('abort', () => clearInterval(ticking));
  replace(root, h('h1', {}, 'Builds'), form, listEl, more);
  await show();
}
