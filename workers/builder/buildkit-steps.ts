/**
 * BuildKit's steps read from its own progress as the build log receives it (plain progress, the
 * form the build step prints, each piece the Dev Containers CLI passes on prefixed with its
 * `[<time>] `): each Dockerfile instruction (`#5 [stage 2/3] RUN ...`), whether it was answered
 * from the cache (`#5 CACHED`), how long it took (`#5 DONE 1.2s`), and its error. Pure: the caller
 * feeds text and says what time it is.
 */
import { stepLabel } from './step-label.js';

export interface TrackedStep {
  /** The instruction with its position (and platform), without its stage: `[2/6] RUN make`. */
  readonly name: string;
  /** The Dockerfile stage it belongs to, when it has a name of the Dockerfile's own. */
  readonly stage?: string;
  readonly cached: boolean;
  readonly startedAt: string;
  /** BuildKit's DONE time; 0 for a cached step; for one that failed or never ended, the time seen. */
  readonly durationMs: number;
  readonly error?: string;
}

interface Vertex {
  name: string;
  stage?: string;
  cached: boolean;
  startedAtMs: number;
  durationMs?: number;
  error?: string;
}

const LINE = /^#(\d+) (.*)$/;
const DONE = /^DONE (?:(\d+)m)?(\d+(?:\.\d+)?)s$/;
/** The Dev Containers CLI's time prefix on each piece of its child's output it passes on. */
const CLI_PREFIX = /^(?:\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z\] ?)+/;

export class StepTracker {
  readonly #now: () => number;
  /** Every vertex seen, in order (of each build, when the log holds more than one). */
  readonly #vertices: Vertex[] = [];
  #current = new Map<string, Vertex | undefined>();
  #partial = '';

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Reads a piece of the build log (any cut). */
  write(chunk: string): void {
    const lines = (this.#partial + chunk).split('\n');
    this.#partial = lines.pop() ?? '';
    for (const line of lines) this.#line(line.replace(/\r+$/, '').replace(CLI_PREFIX, ''));
  }

  #line(line: string): void {
    const match = LINE.exec(line);
    if (match === null) return;
    const [, number = '', rest = ''] = match;
    if (number === '0' || (number === '1' && rest.startsWith('[internal] load build definition'))) {
      // BuildKit's first lines: the build tool started another build (its numbers start again).
      this.#current = new Map();
    }
    if (!this.#current.has(number)) {
      // A vertex's first line names it; a vertex shared by two stages is named once for each:
      // the first name stands. BuildKit's own vertices (no `n/m` position) are not steps.
      const label = stepLabel(rest);
      const vertex: Vertex | undefined =
        label === undefined ? undefined : { ...label, cached: false, startedAtMs: this.#now() };
      this.#current.set(number, vertex);
      if (vertex !== undefined) this.#vertices.push(vertex);
      return;
    }
    const known = this.#current.get(number);
    if (known === undefined) return;
    if (rest === 'CACHED') known.cached = true;
    const done = DONE.exec(rest);
    if (done !== null) known.durationMs = Math.round((Number(done[1] ?? 0) * 60 + Number(done[2])) * 1000);
    if (rest.startsWith('ERROR: ') || rest === 'CANCELED') {
      known.error = rest.replace(/^ERROR: /, '');
      known.durationMs ??= this.#now() - known.startedAtMs;
    }
  }

  /** The steps so far, in the order they started; one still running counts its time until now. */
  steps(): TrackedStep[] {
    const now = this.#now();
    return this.#vertices.map((vertex) => ({
      name: vertex.name,
      ...(vertex.stage === undefined ? {} : { stage: vertex.stage }),
      cached: vertex.cached,
      startedAt: new Date(vertex.startedAtMs).toISOString(),
      durationMs: vertex.durationMs ?? (vertex.cached ? 0 : Math.max(0, now - vertex.startedAtMs)),
      ...(vertex.error === undefined ? {} : { error: vertex.error }),
    }));
  }
}
