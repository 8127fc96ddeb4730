/** Processes of the tests' own, read from /proc. */
import { readdirSync, readFileSync } from 'node:fs';

/** Pids of every live descendant of `root` (this process unless said), from /proc. */
export function descendantPids(root = process.pid): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z') continue;
      parents.set(Number(entry), Number(fields[1]));
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const frontier = [root];
  while (frontier.length > 0) {
    const parent = frontier.pop();
    for (const [pid, ppid] of parents) {
      if (ppid === parent) {
        out.push(pid);
        frontier.push(pid);
      }
    }
  }
  return out;
}

/** A process's command line, its arguments joined by spaces ('' once it is gone). */
export function cmdlineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}

/**
 * Every distinct command line on the machine that holds `needle` (any, unless said), sampled every
 * 100 ms from now until `stop()`, which answers them (arguments joined by spaces).
 */
export function watchCommandLines(needle = ''): { stop: () => string[] } {
  const seen = new Set<string>();
  const sample = (): void => {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const cmdline = cmdlineOf(Number(entry));
      if (cmdline !== '' && cmdline.includes(needle)) seen.add(cmdline);
    }
  };
  const timer = setInterval(sample, 100);
  sample();
  return {
    stop: () => {
      clearInterval(timer);
      return [...seen];
    },
  };
}
