/**
 * A command log drawn as lines of coloured text: pieces arrive in any cut, a line is drawn once
 * complete (the last partial line as it stands), a carriage return keeps what followed it, and
 * the view stays at the bottom while the reader has not scrolled up.
 */
import { ansiRuns, type AnsiState } from './ansi.js';
import { h } from './dom.js';

export class LogView {
  readonly element: HTMLElement;
  private readonly body: HTMLElement;
  private readonly state: AnsiState = {};
  private partial = '';
  private tail: HTMLElement | undefined;

  constructor(label: string) {
    this.body = h('pre', { class: 'log', 'aria-label': label, tabindex: '0' });
    this.element = this.body;
  }

  /** Adds a piece of the log. */
  append(text: string): void {
    const stick = this.body.scrollTop + this.body.clientHeight >= this.body.scrollHeight - 8;
    const lines = (this.partial + text).split('\n');
    this.partial = lines.pop() ?? '';
    this.tail?.remove();
    this.tail = undefined;
    for (const line of lines) this.body.appendChild(this.line(line, this.state));
    if (this.partial !== '') this.tail = this.body.appendChild(this.line(this.partial, { ...this.state }));
    if (stick) this.body.scrollTop = this.body.scrollHeight;
  }

  /** The text drawn so far (what a reader sees), for search and tests. */
  text(): string {
    return this.body.textContent ?? '';
  }

  private line(raw: string, state: AnsiState): HTMLElement {
    const cr = raw.replace(/\r+$/, '').lastIndexOf('\r');
    const visible = cr < 0 ? raw.replace(/\r+$/, '') : raw.slice(cr + 1);
    const el = h('span', { class: 'line' });
    for (const run of ansiRuns(visible, state)) {
      if (run.classes === '') el.appendChild(document.createTextNode(run.text));
      else el.appendChild(h('span', { class: run.classes }, run.text));
    }
    el.appendChild(document.createTextNode('\n'));
    return el;
  }
}
