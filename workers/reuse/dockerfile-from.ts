/**
 * The images a Dockerfile pulls (pure), for the build key: the `FROM` references that are not
 * an earlier stage, and the `--from=` of `COPY`/`ADD` that names an image. Anything whose
 * content the key cannot pin makes the Dockerfile unkeyable, with the reason:
 * a `$` (build argument) in an image reference, `ADD` of a URL or git repository, an escape
 * directive other than the default. `scratch` is no image.
 */

export type DockerfileImages =
  | { readonly kind: 'images'; readonly refs: readonly string[] }
  | { readonly kind: 'unkeyable'; readonly reason: string };

/** Logical instructions: comments dropped, each `\` continuation merged into its line. */
function instructions(text: string): string[] {
  const out: string[] = [];
  let current = '';
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trimEnd();
    if (current === '' && /^\s*#/.test(line)) continue;
    if (line.endsWith('\\')) {
      current += `${line.slice(0, -1)} `;
      continue;
    }
    current += line;
    if (current.trim() !== '') out.push(current.trim());
    current = '';
  }
  if (current.trim() !== '') out.push(current.trim());
  return out;
}

const words = (instruction: string): string[] => instruction.split(/\s+/).filter((w) => w !== '');

const flagValue = (args: readonly string[], flag: string): string | undefined => {
  const prefix = `--${flag}=`;
  return args.find((a) => a.toLowerCase().startsWith(prefix))?.slice(prefix.length);
};

const isRemoteSource = (source: string): boolean =>
  /^[a-z][a-z0-9+.-]*:\/\//i.test(source) || /^git@/i.test(source);

export function dockerfileImages(text: string): DockerfileImages {
  const escape = /^#\s*escape\s*=\s*(\S)/im.exec(text.split(/\r?\n/, 10).join('\n'));
  if (escape !== null && escape[1] !== '\\') {
    return { kind: 'unkeyable', reason: `escape directive ${JSON.stringify(escape[1])}` };
  }
  const stages = new Set<string>();
  const refs: string[] = [];
  let stageIndex = 0;
  const image = (ref: string, where: string): string | undefined => {
    if (ref.includes('$')) return `${where}: ${JSON.stringify(ref)} uses a build argument`;
    const lower = ref.toLowerCase();
    if (lower !== 'scratch' && !stages.has(lower) && !refs.includes(ref)) refs.push(ref);
    return undefined;
  };
  for (const instruction of instructions(text)) {
    const [keyword = '', ...args] = words(instruction);
    const op = keyword.toUpperCase();
    if (op === 'FROM') {
      const plain = args.filter((a) => !a.startsWith('--'));
      const ref = plain[0];
      if (ref === undefined) return { kind: 'unkeyable', reason: 'FROM without an image' };
      const refused = image(ref, 'FROM');
      if (refused !== undefined) return { kind: 'unkeyable', reason: refused };
      if (plain.length >= 3 && plain[1]?.toUpperCase() === 'AS') stages.add((plain[2] ?? '').toLowerCase());
      stages.add(String(stageIndex));
      stageIndex += 1;
    } else if (op === 'COPY' || op === 'ADD') {
      const from = flagValue(args, 'from');
      if (from !== undefined) {
        const refused = image(from, `${op} --from`);
        if (refused !== undefined) return { kind: 'unkeyable', reason: refused };
      }
      if (op === 'ADD') {
        const sources = args.filter((a) => !a.startsWith('--')).slice(0, -1);
        const remote = sources.find(isRemoteSource);
        if (remote !== undefined) {
          return {
            kind: 'unkeyable',
            reason: `ADD of remote content ${JSON.stringify(remote.slice(0, 200))}`,
          };
        }
      }
    }
  }
  return { kind: 'images', refs };
}
