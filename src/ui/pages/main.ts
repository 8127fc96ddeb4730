/**
 * The pages' entry: the navigation, the client-side routes of /ui/, and the sign-in that stands in
 * for every page while the service asks who the tab is: the organisation's provider when the
 * service offers it (unless the person signed out in this tab), else the prompt for a token.
 */
import './app.css';
import { SignInNeeded, loadSession, people, signInHref, signOutPerson, signedOut, token } from './api.js';
import { h, replace } from './dom.js';
import { buildsPage } from './builds-page.js';
import { buildPage } from './build-page.js';
import { buildersPage, deliveriesPage, retentionPage } from './ops-pages.js';
import { usagePage } from './usage-page.js';

/** A page draws into `root`; the returned function stops its polls and followers. */
export type Page = (root: HTMLElement, signal: AbortSignal) => Promise<void>;

const NAV: readonly (readonly [string, string])[] = [
  ['/ui/', 'Builds'],
  ['/ui/builders', 'Builders'],
  ['/ui/retention', 'Retention'],
  ['/ui/deliveries', 'Deliveries'],
  ['/ui/usage', 'Usage'],
];

function route(path: string): Page {
  const build = /^\/ui\/builds\/([^/]+)$/.exec(path);
  if (build?.[1] !== undefined) {
    const id = decodeURIComponent(build[1]);
    return (root, signal) => buildPage(root, signal, id);
  }
  if (path === '/ui/builders') return buildersPage;
  if (path === '/ui/retention') return retentionPage;
  if (path === '/ui/deliveries') return deliveriesPage;
  if (path === '/ui/usage') return usagePage;
  if (path === '/ui/' || path === '/ui') return buildsPage;
  return async (root) => replace(root, h('p', { class: 'empty' }, 'No such page.'));
}

let current: AbortController | undefined;

/** Draws the page of the location; a SignInNeeded from it shows the sign-in prompt instead. */
export function show(): void {
  current?.abort();
  const abort = new AbortController();
  current = abort;
  const app = document.getElementById('app') as HTMLElement;
  const root = h('section', { class: 'page' });
  replace(app, root);
  route(location.pathname)(root, abort.signal).catch((err: unknown) => {
    if (abort.signal.aborted) return;
    if (err instanceof SignInNeeded) {
      if (token.get() === null && people.available && !signedOut.get())
        location.assign(signInHref(location.pathname + location.search));
      else signIn(app, abort);
    } else replace(root, h('p', { class: 'error' }, err instanceof Error ? err.message : String(err)));
  });
  drawNav();
}

/** Moves to `href` in this tab without a reload. */
export function go(href: string): void {
  history.pushState(null, '', href);
  show();
}

function drawNav(): void {
  const nav = document.getElementById('nav') as HTMLElement;
  const links = NAV.map(([href, label]) => {
    const here = href === '/ui/' ? location.pathname === '/ui/' : location.pathname.startsWith(href);
    return h('a', { href, ...(here ? { 'aria-current': 'page' } : {}) }, label);
  });
  const out =
    token.get() === null && !people.signedIn
      ? undefined
      : h('button', { type: 'button', class: 'link', 'data-action': 'sign-out' }, 'Sign out');
  replace(nav, h('strong', {}, 'Image Build Service'), ...links, out);
}

/** The prompt alone: nothing else is shown until a token is given. */
function signIn(app: HTMLElement, abort: AbortController): void {
  abort.abort();
  token.clear();
  const nav = document.getElementById('nav') as HTMLElement;
  replace(nav, h('strong', {}, 'Image Build Service'));
  const input = h('input', { type: 'password', name: 'token', placeholder: 'Bearer token' });
  input.setAttribute('autocomplete', 'off');
  const provider = people.available
    ? h(
        'p',
        {},
        h(
          'a',
          { href: signInHref(location.pathname + location.search), class: 'sign-in-provider' },
          'Sign in with your organisation',
        ),
        ', or give a token.',
      )
    : undefined;
  const form = h(
    'form',
    { class: 'sign-in', 'aria-label': 'Sign in' },
    h('h1', {}, 'Sign in'),
    h('p', {}, 'This service asks who you are. Give your token (kept in this tab only).'),
    provider,
    input,
    h('button', { type: 'submit' }, 'Sign in'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (input.value.trim() === '') return;
    token.set(input.value.trim());
    signedOut.clear();
    show();
  });
  replace(app, form);
  input.focus();
}

function start(): void {
  document.body.prepend(h('nav', { id: 'nav' }));
  document.addEventListener('click', (event) => {
    const target = event.target as Element | null;
    if (target?.closest('[data-action="sign-out"]')) {
      token.clear();
      signedOut.set();
      if (people.signedIn) void signOutPerson().finally(show);
      else show();
      return;
    }
    if (target?.closest('a.sign-in-provider')) signedOut.clear();
    const link = target?.closest('a');
    if (link === null || link === undefined || event.defaultPrevented) return;
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
    const url = new URL(link.href, location.href);
    if (url.origin !== location.origin || !url.pathname.startsWith('/ui/')) return;
    event.preventDefault();
    go(url.pathname + url.search);
  });
  window.addEventListener('popstate', show);
  loadSession().then(show, show);
}

start();
