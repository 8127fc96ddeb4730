// The one reader of /metrics in the tests: Prometheus's text exposition format (version 0.0.4),
// https://prometheus.io/docs/instrumenting/exposition_formats/ — `# HELP`/`# TYPE` lines, then one
// sample a line: name, optional {label="value",...} (escapes \\ \" \n), value, optional timestamp.

interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Exposition {
  readonly samples: readonly Sample[];
  /** Metric family name -> its `# TYPE` (counter, gauge, histogram, summary, untyped). */
  readonly types: ReadonlyMap<string, string>;
  readonly help: ReadonlyMap<string, string>;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL = /^\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,|(?=\}))/;
const UNESCAPE: Record<string, string> = { '\\\\': '\\', '\\"': '"', '\\n': '\n' };

/** A float as Go's ParseFloat reads it, as Prometheus does: NaN and Inf in any case (prom-client writes `Nan`). */
function parseValue(text: string, line: string): number {
  const word = text.toLowerCase();
  if (word === '+inf' || word === 'inf') return Infinity;
  if (word === '-inf') return -Infinity;
  if (word === 'nan') return NaN;
  const value = Number(text);
  if (text === '' || Number.isNaN(value)) throw new Error(`not a sample value in ${JSON.stringify(line)}`);
  return value;
}

function parseSample(line: string): Sample {
  const name = NAME.exec(line)?.[0];
  if (name === undefined) throw new Error(`not a sample line: ${JSON.stringify(line)}`);
  let rest = line.slice(name.length);
  const labels: Record<string, string> = {};
  if (rest.startsWith('{')) {
    rest = rest.slice(1);
    for (let m = LABEL.exec(rest); m !== null; m = LABEL.exec(rest)) {
      labels[m[1] ?? ''] = (m[2] ?? '').replace(/\\[\\"n]/g, (e) => UNESCAPE[e] ?? e);
      rest = rest.slice(m[0].length);
    }
    if (!rest.startsWith('}')) throw new Error(`unterminated labels in ${JSON.stringify(line)}`);
    rest = rest.slice(1);
  }
  const [value = '', timestamp, extra] = rest.trim().split(/\s+/);
  if (extra !== undefined || (timestamp !== undefined && !/^-?\d+$/.test(timestamp)))
    throw new Error(`trailing text in ${JSON.stringify(line)}`);
  return { name, labels, value: parseValue(value, line) };
}

/** Every sample, type and help text of an exposition; a line that is none of these throws. */
export function parseMetrics(text: string): Exposition {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  const help = new Map<string, string>();
  for (const line of text.split('\n')) {
    const comment = /^#\s*(HELP|TYPE)\s+(\S+)\s*(.*)$/.exec(line);
    if (comment !== null) (comment[1] === 'TYPE' ? types : help).set(comment[2] ?? '', comment[3] ?? '');
    else if (line.trim() !== '' && !line.startsWith('#')) samples.push(parseSample(line));
  }
  return { samples, types, help };
}

const sameLabels = (a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(b).every(([k, v]) => a[k] === v);

/** The value of the sample `name` with exactly `labels`; undefined when there is none. */
export function sampleValue(
  exposition: Exposition,
  name: string,
  labels: Readonly<Record<string, string>> = {},
): number | undefined {
  return exposition.samples.find((s) => s.name === name && sameLabels(s.labels, labels))?.value;
}

/** GET <url>/metrics, parsed. */
export async function scrapeMetrics(url: string): Promise<Exposition> {
  const res = await fetch(`${url}/metrics`);
  if (res.status !== 200) throw new Error(`GET ${url}/metrics answered ${res.status}`);
  return parseMetrics(await res.text());
}

/** The value of one sample of <url>/metrics; fails when the service does not export it. */
export async function metricValue(
  url: string,
  name: string,
  labels: Readonly<Record<string, string>> = {},
): Promise<number> {
  const value = sampleValue(await scrapeMetrics(url), name, labels);
  if (value === undefined) throw new Error(`${url}/metrics has no ${name} ${JSON.stringify(labels)}`);
  return value;
}
