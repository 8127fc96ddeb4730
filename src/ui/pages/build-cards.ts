/**
 * The builds list on a narrow screen: one card per build (its id shortened, status, repository,
 * branch and age), drawn next to the table; the style sheet shows the cards below 600 pixels and
 * the table above, so the page never scrolls sideways. Every value is text.
 */
import type { Build } from './api.js';
import { h } from './dom.js';

/** `bld-<uuid>` as its first 8 hex digits: `bld-1a2b3c4d` (the whole id in the link's title). */
const shortId = (id: string): string => id.replace(/^(bld-[0-9a-f]{8})-[0-9a-f-]+$/, '$1');

/** How long ago `iso` was, in the largest whole unit: `42 s ago`, `5 min ago`, `3 h ago`, `2 d ago`. */
function age(iso: string, now = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (!Number.isFinite(seconds)) return '';
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86_400)} d ago`;
}

/** How a build's status is drawn (the list's own badge). */
type Badge = (build: Build) => HTMLElement;

function card(build: Build, badge: Badge): HTMLElement {
  const href = `/ui/builds/${encodeURIComponent(build.id)}`;
  return h(
    'li',
    { class: 'build-card' },
    h(
      'div',
      { class: 'card-head' },
      h('a', { href, 'data-card': build.id, title: build.id }, h('code', {}, shortId(build.id))),
      badge(build),
      h(
        'span',
        { class: 'age', title: build.startedAt, 'data-started': build.startedAt },
        age(build.startedAt),
      ),
    ),
    h('div', { class: 'repo' }, build.repository),
    build.branch === undefined ? undefined : h('div', { class: 'branch' }, build.branch),
  );
}

/** How often the cards' ages are told again (the list is drawn again only when a build changes). */
const AGE_TICK_MS = 15_000;
let ticking = false;

/** Keeps every card's age current while the page is open (one timer for the page). */
function keepAgesCurrent(): void {
  if (ticking) return;
  ticking = true;
  setInterval(() => {
    for (const el of document.querySelectorAll<HTMLElement>('.build-card .age[data-started]'))
      el.textContent = age(el.dataset.started ?? '');
  }, AGE_TICK_MS);
}

/** The cards of `builds`, in their order. */
export function buildCards(builds: readonly Build[], badge: Badge): HTMLElement {
  keepAgesCurrent();
  return h('ol', { class: 'build-cards', 'aria-label': 'Builds' }, ...builds.map((b) => card(b, badge)));
}
