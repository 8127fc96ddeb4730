/**
 * The argument table of `ibs`: one row per option, naming the commands that take it. It drives
 * both the parser (Node's util.parseArgs, strict) and --help, so the two cannot disagree.
 * Credentials are never options: they come from the environment only (env.ts).
 */
import { parseArgs } from 'node:util';
import { EXIT_CODES } from './exit-codes.js';
import { REQUEST_ID_CHARACTERS, REQUEST_ID_MAX_LENGTH } from '../rules/limits.js';

const COMMANDS = {
  build: {
    usage: 'ibs build --repository URL [options]',
    summary: 'build (or reuse) an image, following its output',
  },
  'image exists': {
    usage: 'ibs image exists --registry R --name N --tag T',
    summary: 'exit 0 if the image exists, 1 if not',
  },
  'image delete': {
    usage: 'ibs image delete --registry R --name N --tag T',
    summary: "delete the image's manifest (best effort)",
  },
  devcontainer: {
    usage: 'ibs devcontainer --registry R --name N --tag T [--platform P] [--script HOOK]',
    summary: 'the merged dev container configuration (or one lifecycle script)',
  },
  logs: { usage: 'ibs logs ID [--follow]', summary: 'print a captured command log' },
} as const;

export type CommandName = keyof typeof COMMANDS;
const ALL = Object.keys(COMMANDS) as CommandName[];
const IMAGE: CommandName[] = ['image exists', 'image delete', 'devcontainer'];

export interface OptionRow {
  readonly name: string;
  readonly type: 'string' | 'boolean';
  readonly multiple?: boolean;
  /** Placeholder of the value in --help. */
  readonly value?: string;
  readonly env?: string;
  readonly default?: string;
  readonly commands: readonly CommandName[];
  readonly description: string;
}

export const OPTIONS: readonly OptionRow[] = [
  {
    name: 'server',
    type: 'string',
    value: 'URL',
    env: 'IBS_SERVER',
    commands: ALL,
    description: 'the service, e.g. http://image-build-service:8080',
  },
  {
    name: 'repository',
    type: 'string',
    value: 'URL',
    commands: ['build'],
    description: 'git repository (https://, ssh:// or SCP-style), without credentials',
  },
  {
    name: 'branch',
    type: 'string',
    value: 'REF',
    commands: ['build'],
    description: "branch or tag (default: the repository's default branch)",
  },
  {
    name: 'registry',
    type: 'string',
    value: 'HOST',
    commands: ['build', ...IMAGE],
    description: "target registry (build: default from the server's mapping rules)",
  },
  {
    name: 'name',
    type: 'string',
    value: 'NAME',
    commands: ['build', ...IMAGE],
    description: 'image name (build: default from the repository path)',
  },
  {
    name: 'tag',
    type: 'string',
    value: 'TAG',
    commands: ['build', ...IMAGE],
    description: 'image tag (build: default sha-<short commit>)',
  },
  {
    name: 'platform',
    type: 'string',
    multiple: true,
    value: 'OS/ARCH',
    commands: ['build', 'devcontainer'],
    description: 'build: a platform to build (repeatable); devcontainer: the entry to read',
  },
  { name: 'no-cache', type: 'boolean', commands: ['build'], description: 'build without the build cache' },
  {
    name: 'cache-from',
    type: 'string',
    value: 'SPEC',
    commands: ['build'],
    description: 'cache import, e.g. type=registry,ref=...',
  },
  {
    name: 'cache-to',
    type: 'string',
    value: 'SPEC',
    commands: ['build'],
    description: 'cache export, e.g. type=registry,ref=...,mode=max',
  },
  {
    name: 'request-id',
    type: 'string',
    value: 'ID',
    default: 'a new UUID',
    commands: ['build'],
    description: `X-Request-Id of the build (${REQUEST_ID_CHARACTERS}, 1-${REQUEST_ID_MAX_LENGTH})`,
  },
  {
    name: 'timeout',
    type: 'string',
    value: 'SECONDS',
    default: '3600',
    commands: ['build'],
    description: 'how long to try in all (waits on 429, new attempts)',
  },
  {
    name: 'script',
    type: 'string',
    value: 'HOOK',
    commands: ['devcontainer'],
    description: 'print the runnable script of one lifecycle hook (e.g. postCreateCommand)',
  },
  {
    name: 'follow',
    type: 'boolean',
    commands: ['logs'],
    description: 'keep printing until the command ends',
  },
  {
    name: 'json',
    type: 'boolean',
    commands: ALL,
    description: 'machine-readable output: one JSON document on stdout, whatever the outcome',
  },
  { name: 'help', type: 'boolean', commands: ALL, description: 'this help' },
];

/** A command line ibs cannot use (exit 2, with the message; with `json`, as a JSON document too). */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly json = false,
  ) {
    super(message);
  }
}

export type Values = Record<string, string | boolean | string[] | undefined>;

export type Parsed =
  | { readonly kind: 'help'; readonly text: string }
  | {
      readonly kind: 'run';
      readonly command: CommandName;
      readonly values: Values;
      readonly positionals: string[];
    };

function commandOf(argv: readonly string[]): { command: CommandName | undefined; rest: string[] } {
  const [first, second] = argv;
  if (first === 'image' && (second === 'exists' || second === 'delete')) {
    return { command: `image ${second}`, rest: argv.slice(2) };
  }
  if (first !== undefined && first !== 'image' && first in COMMANDS) {
    return { command: first as CommandName, rest: argv.slice(1) };
  }
  return { command: undefined, rest: [...argv] };
}

/** The rows of one command. */
export const optionsOf = (command: CommandName): OptionRow[] =>
  OPTIONS.filter((row) => row.commands.includes(command));

const parseOptions = (rows: readonly OptionRow[]) =>
  Object.fromEntries(rows.map((row) => [row.name, { type: row.type, multiple: row.multiple ?? false }]));

/** Whether a command line ibs cannot use asks for --json: read with the same table, leniently. */
function jsonAsked(argv: readonly string[]): boolean {
  const { command, rest } = commandOf(argv);
  const options = parseOptions(command === undefined ? OPTIONS : optionsOf(command));
  return parseArgs({ args: rest, options, allowPositionals: true, strict: false }).values.json === true;
}

/** Parses argv (without node and the script); `env` fills options that have an env name. */
export function parseCommandLine(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Parsed {
  const { command, rest } = commandOf(argv);
  if (command === undefined) {
    if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
      return { kind: 'help', text: helpText() };
    }
    throw new UsageError(`unknown command "${argv.slice(0, 2).join(' ')}"; see ibs --help`, jsonAsked(argv));
  }
  const options = parseOptions(optionsOf(command));
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: rest, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(`${(err as Error).message}; see ibs ${command} --help`, jsonAsked(argv));
  }
  if (parsed.values.help === true) return { kind: 'help', text: helpText(command) };
  const values = { ...parsed.values } as Values;
  for (const row of optionsOf(command)) {
    if (values[row.name] === undefined && row.env !== undefined && env[row.env])
      values[row.name] = env[row.env];
  }
  return { kind: 'run', command, values, positionals: parsed.positionals };
}

function optionLine(row: OptionRow): string {
  const flag = `--${row.name}${row.value ? ` ${row.value}` : ''}`;
  const notes = [
    row.multiple ? 'repeatable' : '',
    row.env ? `env ${row.env}` : '',
    row.default ? `default: ${row.default}` : '',
  ].filter(Boolean);
  return `  ${flag.padEnd(24)} ${row.description}${notes.length ? ` (${notes.join('; ')})` : ''}`;
}

/** Credentials and other environment variables (documented with the options; read by env.ts). */
const ENVIRONMENT: readonly { readonly name: string; readonly description: string }[] = [
  {
    name: 'IBS_GIT_USERNAME, IBS_GIT_TOKEN',
    description: 'clone credentials (together), sent as gitCredentials',
  },
  { name: 'IBS_REGISTRY', description: 'the registry the next two are for (default: --registry)' },
  { name: 'IBS_REGISTRY_USERNAME, IBS_REGISTRY_PASSWORD', description: 'registry credentials (together)' },
  {
    name: 'IBS_TOKEN',
    description: 'the bearer token sent on every request (a static token, or GitLab id_tokens)',
  },
  {
    name: 'IBS_OIDC_AUDIENCE',
    description: 'GitHub Actions without IBS_TOKEN: the audience of the ID token ibs asks the runner for',
  },
  {
    name: 'GITHUB_OUTPUT',
    description: 'build: image, registry, name, tag, commit, digest are written there',
  },
];

/** The help of one command, or of all. */
export function helpText(command?: CommandName): string {
  const commands = command ? [command] : (Object.keys(COMMANDS) as CommandName[]);
  const parts = commands.map((name) =>
    [`${COMMANDS[name].usage}`, `  ${COMMANDS[name].summary}`, ...optionsOf(name).map(optionLine)].join('\n'),
  );
  const env = ENVIRONMENT.map((e) => `  ${e.name.padEnd(44)} ${e.description}`);
  return [
    'ibs: the CI client of the image build service (docs/ci.md)',
    '',
    parts.join('\n\n'),
    '',
    'Credentials come only from the environment, never from arguments; they are never printed:',
    ...env,
    '',
    'Exit codes:',
    ...EXIT_CODES.map((e) => `  ${String(e.code).padEnd(4)} ${e.meaning}`),
    '',
  ].join('\n');
}
