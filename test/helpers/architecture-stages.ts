/**
 * ARCHITECTURE.md's list of a build's stages, read as `N name`: each `N. name:` at the start of a
 * line of its "Life of a POST /build" section, or after `; `.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ARCHITECTURE = fileURLToPath(new URL('../../ARCHITECTURE.md', import.meta.url));

export function architectureStages(markdown = readFileSync(ARCHITECTURE, 'utf8')): string[] {
  const life = /## Life of a POST \/build[^\n]*\n([\s\S]*?)\n## /.exec(markdown)?.[1] ?? '';
  return [...life.matchAll(/(?:^|; )(\d+)\. ([^:;]+):/gm)].map((m) => `${m[1]} ${m[2]}`);
}
