/**
 * The step outputs written to the file GitHub Actions names in GITHUB_OUTPUT (one `key=value`
 * per line; a value holding a newline uses the `key<<DELIMITER` form). Appended, never rewritten:
 * other steps' outputs share the file.
 */
import { appendFile } from 'node:fs/promises';

/** The build answer's fields a workflow uses. */
const OUTPUT_KEYS = ['image', 'registry', 'name', 'tag', 'commit', 'digest'] as const;

/** The lines for `outputs` (pure but for the delimiter, which is passed in). */
export function formatOutputs(outputs: Readonly<Record<string, string>>, delimiter: string): string {
  return Object.entries(outputs)
    .map(([key, value]) =>
      /[\r\n]/.test(value) ? `${key}<<${delimiter}\n${value}\n${delimiter}\n` : `${key}=${value}\n`,
    )
    .join('');
}

/** The outputs of a build answer: each of OUTPUT_KEYS that is a string (missing ones are empty). */
export function buildOutputs(answer: Readonly<Record<string, unknown>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of OUTPUT_KEYS) {
    const value = answer[key];
    out[key] = typeof value === 'string' ? value : '';
  }
  return out;
}

export async function writeGithubOutput(
  path: string,
  outputs: Readonly<Record<string, string>>,
): Promise<void> {
  await appendFile(path, formatOutputs(outputs, `ibs_${crypto.randomUUID()}`), 'utf8');
}
