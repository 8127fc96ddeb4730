/**
 * A log's ANSI colours (SGR escapes) as spans of text with classes: the colours render, the escape
 * codes never show, and the text stays text. The state carries from one line to the next, as in a
 * terminal. Other escapes (cursor moves, erase) are dropped.
 */

export interface AnsiState {
  fg?: number;
  bg?: number;
  bold?: boolean;
  dim?: boolean;
  italic?: boolean;
  underline?: boolean;
}

export interface AnsiRun {
  readonly text: string;
  /** Space-separated classes: `fg-1`, `bg-4`, `fg-9` (bright red), `bold`, ... */
  readonly classes: string;
}

// eslint-disable-next-line no-control-regex
const ESCAPE = /\x1b\[([0-9;?]*)([A-Za-z])|\x1b[()][A-Za-z0-9]|\x1b[=>78]|[\x00-\x08\x0b-\x1f\x7f]/g;

function classesOf(state: AnsiState): string {
  const out: string[] = [];
  if (state.fg !== undefined) out.push(`fg-${state.fg}`);
  if (state.bg !== undefined) out.push(`bg-${state.bg}`);
  if (state.bold) out.push('bold');
  if (state.dim) out.push('dim');
  if (state.italic) out.push('italic');
  if (state.underline) out.push('underline');
  return out.join(' ');
}

/** Applies one SGR parameter list (`1;31`) to `state`. */
function applySgr(state: AnsiState, params: string): void {
  const codes = params === '' ? [0] : params.split(';').map((p) => Number(p || 0));
  for (let i = 0; i < codes.length; i += 1) {
    const code = codes[i] ?? 0;
    if (code === 0) {
      for (const key of Object.keys(state)) delete state[key as keyof AnsiState];
    } else if (code === 1) state.bold = true;
    else if (code === 2) state.dim = true;
    else if (code === 3) state.italic = true;
    else if (code === 4) state.underline = true;
    else if (code === 22) state.bold = state.dim = false;
    else if (code === 23) state.italic = false;
    else if (code === 24) state.underline = false;
    else if (code >= 30 && code <= 37) state.fg = code - 30;
    else if (code >= 90 && code <= 97) state.fg = code - 90 + 8;
    else if (code === 39) delete state.fg;
    else if (code >= 40 && code <= 47) state.bg = code - 40;
    else if (code >= 100 && code <= 107) state.bg = code - 100 + 8;
    else if (code === 49) delete state.bg;
    else if ((code === 38 || code === 48) && codes[i + 1] === 5) {
      const n = codes[i + 2] ?? 0;
      if (n < 16) state[code === 38 ? 'fg' : 'bg'] = n;
      i += 2;
    } else if ((code === 38 || code === 48) && codes[i + 1] === 2) i += 4;
  }
}

/** One line of a log as runs of text and their classes; `state` is read and updated. */
export function ansiRuns(line: string, state: AnsiState): AnsiRun[] {
  const runs: AnsiRun[] = [];
  let at = 0;
  const push = (text: string): void => {
    if (text !== '') runs.push({ text, classes: classesOf(state) });
  };
  for (const match of line.matchAll(ESCAPE)) {
    push(line.slice(at, match.index));
    at = match.index + match[0].length;
    if (match[2] === 'm') applySgr(state, match[1] ?? '');
  }
  push(line.slice(at));
  return runs;
}
