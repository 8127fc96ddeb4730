/**
 * BuildKit's steps read from its own progress as the build log receives it (plain progress, the
 * form the build step prints): each Dockerfile instruction (`#5 [stage 2/3] RUN ...`), whether it
 * was answered from the cache (`#5 CACHED`), how long it took (`#5 DONE 1.2s`), and its error.
 * Pure: the caller feeds text and says what time it is.
 */

export interface TrackedStep {
  readonly name: string;
  readonly cached: boolean;
  readonly startedAt: string;
  readonly durationMs?: number;
  readonly error?: string;
}

interface Vertex {
  name: string;
  cached: boolean;
  startedAtMs: number;
  durationMs?: number;
  error?: string;
}

const LINE = /^#(\d+) (.*)$/;
const DONE = /^DONE (?:(\d+)m)?(\d+(?:\.\d+)?)s$/;

export class StepTracker {
  readonly #now: () => number;
  /** Every vertex seen, in order (of each build, when the log holds more than one). */
  readonly #vertices: Vertex[] = [];
  #current = new Map<string, Vertex>();
  #partial = '';

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Reads a piece of the build log (any cut). */
  write(chunk: string): void {
    const lines = (this.#partial + chunk).split('\n');
    this.#partial = lines.pop() ?? '';
    for (const line of lines) this.#line(line.replace(/\r+$/, ''));
  }

  #line(line: string): void {
    const match = LINE.exec(line);
    if (match === null) return;
    const [, number = '', rest = ''] = match;
    if (number === '0' || (number === '1' && rest.startsWith('[internal] load build definition'))) {
      // BuildKit's first lines: the build tool started another build (its numbers start again).
      this.#current = new Map();
    }
    if (rest.startsWith('[')) {
      // A vertex shared by two stages is named once for each: the first name stands.
      if (this.#current.has(number)) return;
      const vertex: Vertex = { name: rest, cached: false, startedAtMs: this.#now() };
      this.#current.set(number, vertex);
      if (!rest.startsWith('[internal]')) this.#vertices.push(vertex);
      return;
    }
    const known = this.#current.get(number);
    if (known === undefined) return;
    if (rest === 'CACHED') known.cached = true;
    const done = DONE.exec(rest);
    if (done !== null) known.durationMs = Math.round((Number(done[1] ?? 0) * 60 + Number(done[2])) * 1000);
    if (rest.startsWith('ERROR: ') || rest === 'CANCELED') known.error = rest.replace(/^ERROR: /, '');
  }

  /** The steps so far, in the order they started. */
  steps(): TrackedStep[] {
    return this.#vertices.map((vertex) => ({
      name: vertex.name,
      cached: vertex.cached,
      startedAt: new Date(vertex.startedAtMs).toISOString(),
      ...(vertex.durationMs === undefined ? {} : { durationMs: vertex.durationMs }),
      ...(vertex.error === undefined ? {} : { error: vertex.error }),
    }));
  }
}
