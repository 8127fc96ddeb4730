/**
 * Command-line parsing driven by the option table: `--flag value`, `--flag=value`; booleans as
 * `--flag` or `--flag=true|false`; `--help`/`-h` and `--version`. Values stay text here (typed by
 * load.ts). Pure: no I/O.
 */
import { OPTION_BY_FLAG, type OptionName } from './options.js';

export interface ParsedArgv {
  /** Raw text per option given on the command line (the last occurrence wins). */
  readonly values: ReadonlyMap<OptionName, string>;
  readonly help: boolean;
  readonly version: boolean;
  readonly problems: readonly string[];
}

export function parseArgv(argv: readonly string[]): ParsedArgv {
  const values = new Map<OptionName, string>();
  const problems: string[] = [];
  let help = false;
  let version = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--help' || arg === '-h') {
      help = true;
      continue;
    }
    if (arg === '--version') {
      version = true;
      continue;
    }
    if (!arg.startsWith('--')) {
      problems.push(`unexpected argument ${JSON.stringify(arg)} (options are --flag value or --flag=value)`);
      continue;
    }
    const eq = arg.indexOf('=');
    const flag = eq >= 0 ? arg.slice(0, eq) : arg;
    const option = OPTION_BY_FLAG.get(flag);
    if (!option) {
      problems.push(`unknown option ${flag} (see --help)`);
      // Its value, if any, is part of the same mistake.
      if (eq < 0 && argv[i + 1] !== undefined && !argv[i + 1]?.startsWith('--')) i++;
      continue;
    }
    if (eq >= 0) {
      values.set(option.name, arg.slice(eq + 1));
    } else if (option.type === 'boolean') {
      values.set(option.name, 'true');
    } else {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) {
        problems.push(`${flag}: missing value`);
        continue;
      }
      values.set(option.name, next);
      i++;
    }
  }
  return { values, help, version, problems };
}
