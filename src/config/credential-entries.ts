/** Checks across git credential entries that a schema cannot express. Pure: no I/O. */
import type { GitCredential } from './types.js';

/** Two entries for the same host, kind and port would be ambiguous: each later one is a problem (named by `item`). */
export function duplicateCredentialProblems(
  entries: readonly GitCredential[],
  item: (index: number) => string,
): string[] {
  const seen = new Map<string, number>();
  const problems: string[] = [];
  entries.forEach((entry, index) => {
    const key = `${entry.host.toLowerCase()}|${entry.kind}|${entry.port ?? ''}`;
    const first = seen.get(key);
    if (first === undefined) {
      seen.set(key, index);
      return;
    }
    const port = entry.port === undefined ? '' : ` port ${entry.port}`;
    problems.push(
      `${item(index)}: duplicate of entry [${first}] (host "${entry.host}"${port}, kind ${entry.kind})`,
    );
  });
  return problems;
}
