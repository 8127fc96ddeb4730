/**
 * "Rebuilt because" on a build's page: each input that differs from the earlier build, its old and
 * new value, and for a path of the read set the files under it that differ (added, changed,
 * removed; the first 50, then how many more). Text only: a file name is drawn as its characters.
 */
import type { ChangedInput, RebuiltBecause } from '../../builds/types.js';
import { h } from './dom.js';

/** Object ids shortened as git shows them; digests and other values as they are. */
const shown = (value: string): string => (/^[0-9a-f]{40}$/.test(value) ? value.slice(0, 12) : value);

function changeItem(change: ChangedInput): HTMLElement {
  const values =
    change.before === undefined || change.after === undefined
      ? ' (other values)'
      : [' ', h('code', { class: 'was' }, shown(change.before)), ' → ', h('code', {}, shown(change.after))];
  const files = change.files ?? [];
  const more = change.moreFiles ?? 0;
  const list =
    files.length === 0 && more === 0
      ? undefined
      : h(
          'ul',
          { class: 'changed-files' },
          ...files.map((file) =>
            h(
              'li',
              { 'data-change': file.change },
              h('span', { class: `badge ${file.change}` }, file.change),
              ' ',
              h('code', {}, file.path),
            ),
          ),
          more === 0
            ? undefined
            : h('li', { class: 'more' }, `and ${more} more file${more === 1 ? '' : 's'}`),
        );
  return h('li', {}, h('code', { class: 'input' }, change.input), ...[values].flat(), list);
}

/** The "Rebuilt because" block of a record (its `changes`, or its lines in a record without them). */
export function rebuiltView(rebuilt: RebuiltBecause): HTMLElement {
  const changes = rebuilt.changes ?? [];
  const items =
    changes.length > 0
      ? changes.map(changeItem)
      : rebuilt.inputs.map((line) => h('li', {}, h('code', {}, line)));
  return h(
    'div',
    { class: 'rebuilt' },
    h('h3', {}, 'Rebuilt because'),
    rebuilt.since === undefined ? undefined : h('p', {}, `Compared with ${rebuilt.since}`),
    h('ul', {}, ...items),
  );
}
