/**
 * The pages' one way of making elements: every value becomes text (textContent), never markup,
 * whatever a repository, a branch, a log or a registry put in it.
 */

export type Child = Node | string | number | undefined | null | false;

export interface Props {
  readonly class?: string;
  readonly id?: string;
  readonly role?: string;
  readonly tabindex?: string;
  readonly href?: string;
  readonly title?: string;
  readonly type?: string;
  readonly name?: string;
  readonly value?: string;
  readonly placeholder?: string;
  readonly [data: `data-${string}`]: string;
  readonly [aria: `aria-${string}`]: string;
}

/** An element with attributes and children; a string child is a text node. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (typeof value === 'string') el.setAttribute(name, value);
  }
  append(el, children);
  return el;
}

function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

/** Replaces every child of `parent`. */
export function replace(parent: Node, ...children: Child[]): void {
  while (parent.firstChild) parent.removeChild(parent.firstChild);
  append(parent, children);
}

/** A table of rows; each cell a child (text or an element). */
export function table(headers: readonly string[], rows: readonly (readonly Child[])[]): HTMLElement {
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      {},
      h('thead', {}, h('tr', {}, ...headers.map((name) => h('th', {}, name)))),
      h('tbody', {}, ...rows.map((cells) => h('tr', {}, ...cells.map((cell) => h('td', {}, cell))))),
    ),
  );
}

/** A definition list of label/value pairs; pairs whose value is absent are left out. */
export function fields(pairs: readonly (readonly [string, Child])[]): HTMLElement {
  const list = h('dl', { class: 'fields' });
  for (const [label, value] of pairs) {
    if (value === undefined || value === null || value === false || value === '') continue;
    append(list, [h('dt', {}, label), h('dd', {}, value)]);
  }
  return list;
}

/** Seconds as `1 m 05 s`, `12.3 s` or `850 ms`. */
export function duration(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds)) return '';
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const m = Math.floor(seconds / 60);
  const s = Math.round(seconds % 60);
  return `${m} m ${String(s).padStart(2, '0')} s`;
}

/** An ISO time as the reader's local date and time. */
export function when(iso: string | undefined): string {
  if (iso === undefined) return '';
  const t = new Date(iso);
  return Number.isNaN(t.getTime()) ? iso : t.toLocaleString();
}

/** Bytes as KiB, MiB or GiB. */
export function bytes(count: number | undefined): string {
  if (count === undefined) return '';
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let v = count;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return `${i === 0 ? v : v.toFixed(1)} ${units[i]}`;
}
