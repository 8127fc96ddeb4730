'use strict';
/**
 * The Dockerfile of a build offered secrets, keyed (docs/secrets.md, The builder's cache): a copy
 * with `ARG <name>` after every FROM, so every RUN step has the secrets' identity in its cache key.
 * argv: [dockerfile, name, folder]; writes the copy (and its `.dockerignore`) into a new folder
 * inside `folder`, the request's own in the scratch space, and prints its path. Nothing is made
 * when the Dockerfile cannot be read.
 */
const fs = require('node:fs');
const path = require('node:path');

/** `# directive=value` lines at the very top; only `escape` matters here. */
const DIRECTIVE = /^\s*#\s*([A-Za-z][A-Za-z0-9]*)\s*=\s*(\S+)\s*$/;
/** A heredoc opener of RUN, COPY or ADD: `<<EOF`, `<<-EOF`, `<<"EOF"`, `<<'EOF'`, `3<<EOF`. */
const HEREDOC = /(?:^|\s)\d*<<(-?)(["']?)([^\s"'<>]+)\2(?=\s|$)/g;
const HEREDOC_INSTRUCTIONS = new Set(['run', 'copy', 'add']);
const SKIPPED = /^\s*(?:#.*)?$/;

function escapeOf(lines) {
  for (const line of lines) {
    const directive = DIRECTIVE.exec(line);
    if (directive === null) break;
    if (directive[1].toLowerCase() === 'escape' && (directive[2] === '`' || directive[2] === '\\'))
      return directive[2];
  }
  return '\\';
}

function heredocsOf(keyword, text) {
  if (!HEREDOC_INSTRUCTIONS.has(keyword)) return [];
  return [...text.matchAll(HEREDOC)].map((match) => ({ strip: match[1] === '-', word: match[3] }));
}

/** Whether `line` (without its line ending) ends the first of `heredocs`. */
function endsHeredoc(heredoc, line) {
  return (heredoc.strip ? line.replace(/^\t+/, '') : line) === heredoc.word;
}

/** `text` with `ARG <name>` after each FROM instruction (its last line, continuations included). */
function keyedDockerfile(text, name) {
  const lines = text.split(/(?<=\n)/);
  const escape = escapeOf(lines);
  const continued = new RegExp(`${escape === '`' ? '`' : '\\\\'}[ \\t]*$`);
  const out = [];
  let instruction; // { keyword, text } while an instruction spans lines
  let heredocs = [];
  for (const line of lines) {
    out.push(line);
    const body = line.replace(/\r?\n$/, '');
    if (heredocs.length > 0) {
      if (endsHeredoc(heredocs[0], body)) heredocs = heredocs.slice(1);
      continue;
    }
    if (SKIPPED.test(body)) continue;
    instruction ??= { keyword: (/^\s*(\S+)/.exec(body) ?? ['', ''])[1].toLowerCase(), text: '' };
    instruction.text += ` ${body}`;
    if (continued.test(body)) continue;
    if (instruction.keyword === 'from') out.push(`${line.endsWith('\n') ? '' : '\n'}ARG ${name}\n`);
    heredocs = heredocsOf(instruction.keyword, instruction.text);
    instruction = undefined;
  }
  return out.join('');
}

function main(argv) {
  const [dockerfile, name, folder] = argv;
  if (dockerfile === undefined || name === undefined || !folder)
    throw new Error('usage: keyed-dockerfile.cjs FILE NAME FOLDER');
  const keyed = keyedDockerfile(fs.readFileSync(dockerfile, 'utf8'), name);
  const dir = fs.mkdtempSync(path.join(path.resolve(folder), 'keyed-dockerfile-'));
  try {
    const copy = path.join(dir, path.basename(dockerfile));
    fs.writeFileSync(copy, keyed, { mode: 0o600 });
    const ignore = `${dockerfile}.dockerignore`;
    if (fs.existsSync(ignore)) fs.copyFileSync(ignore, `${copy}.dockerignore`);
    process.stdout.write(copy);
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

module.exports = { keyedDockerfile };

if (require.main === module) {
  try {
    main(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`keyed Dockerfile: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
