/**
 * The files configuration reads at startup: every file's text through readText (so each says alike
 * why it cannot be read), the settings and side files (JSON or YAML by extension, at most
 * MAX_CONFIG_FILE_BYTES) and the ambient docker config document. Problems are returned as texts;
 * parser messages are not echoed (they quote file content, which may hold secrets), only the
 * position.
 */
import { readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { decodeBasicAuth } from '../secrets/basic-auth.js';
import type { DockerAuthEntry, DockerConfigDocument } from './types.js';

export type FileResult<T> = { ok: true; value: T } | { ok: false; problems: string[] };

/** The largest settings or side file read, in bytes (4 MiB): far above any real configuration. */
export const MAX_CONFIG_FILE_BYTES = 4 * 1024 * 1024;

const fail = <T>(...problems: string[]): FileResult<T> => ({ ok: false, problems });

/** A file's text, or why not: `cannot be read (ENOENT)`, or over `maxBytes`. Never its content. */
export type TextRead = { ok: true; text: string } | { ok: false; code: string; why: string };

/** The one reader of configuration files, so each says why it could not be read alike. */
export function readText(path: string, maxBytes = Number.POSITIVE_INFINITY): TextRead {
  try {
    const size = Number.isFinite(maxBytes) ? statSync(path).size : 0;
    if (size > maxBytes)
      return { ok: false, code: 'EFBIG', why: `is larger than ${maxBytes} bytes (${size})` };
    return { ok: true, text: readFileSync(path, 'utf8') };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    return { ok: false, code, why: `cannot be read (${code})` };
  }
}

/** Line and column (1-based) of a character offset. */
function position(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  return `line ${line}, column ${column}`;
}

function parseJson(text: string, path: string, what: string): FileResult<unknown> {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (err) {
    const at = /position (\d+)/.exec(String((err as Error).message));
    return fail(`${what} ${path}: not valid JSON${at?.[1] ? ` (${position(text, Number(at[1]))})` : ''}`);
  }
}

function parseYamlText(text: string, path: string, what: string): FileResult<unknown> {
  try {
    // An empty document is null: read it as "nothing set".
    return { ok: true, value: (parseYaml(text) as unknown) ?? undefined };
  } catch (err) {
    const at = err instanceof YAMLParseError ? err.linePos?.[0] : undefined;
    return fail(`${what} ${path}: not valid YAML${at ? ` (line ${at.line}, column ${at.col})` : ''}`);
  }
}

/** A JSON (`.json`) or YAML (`.yaml`, `.yml`) file; any other extension is a problem. */
export function readStructuredFile(path: string, what: string): FileResult<unknown> {
  const extension = extname(path).toLowerCase();
  if (extension !== '.json' && extension !== '.yaml' && extension !== '.yml') {
    return fail(`${what} ${path}: unsupported extension "${extension}" (use .json, .yaml or .yml)`);
  }
  const read = readText(path, MAX_CONFIG_FILE_BYTES);
  if (!read.ok) return fail(`${what} ${path}: ${read.why}`);
  return extension === '.json' ? parseJson(read.text, path, what) : parseYamlText(read.text, path, what);
}

const AUTH_FIELDS = ['auth', 'username', 'password', 'identitytoken'] as const;

/**
 * The ambient registry auth: `<dir>/config.json` (`{auths: {<registry>: {auth: base64(user:password)}}}`).
 * A missing file is `{auths: {}}`; other keys of the document (credsStore, ...) are ignored.
 */
export function readDockerConfig(dir: string): FileResult<DockerConfigDocument> {
  const path = join(dir, 'config.json');
  const what = 'docker config';
  const read = readText(path);
  if (!read.ok) {
    if (read.code === 'ENOENT' || read.code === 'ENOTDIR') return { ok: true, value: { auths: {} } };
    return fail(`${what} ${path}: ${read.why}`);
  }
  const { text } = read;
  if (text.trim() === '') return { ok: true, value: { auths: {} } };
  const parsed = parseJson(text, path, what);
  if (!parsed.ok) return parsed;
  const doc = parsed.value;
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    return fail(`${what} ${path}: must be a JSON object`);
  }
  const auths = (doc as { auths?: unknown }).auths;
  if (auths === undefined || auths === null) return { ok: true, value: { auths: {} } };
  if (typeof auths !== 'object' || Array.isArray(auths)) {
    return fail(`${what} ${path}: "auths" must be an object`);
  }
  const problems: string[] = [];
  const out: Record<string, DockerAuthEntry> = {};
  for (const [registry, entry] of Object.entries(auths as Record<string, unknown>)) {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      problems.push(`${what} ${path}: auths["${registry}"] must be an object`);
      continue;
    }
    const kept: Record<string, string> = {};
    for (const field of AUTH_FIELDS) {
      const value = (entry as Record<string, unknown>)[field];
      if (value === undefined || value === null || value === '') continue;
      if (typeof value !== 'string') {
        problems.push(`${what} ${path}: auths["${registry}"].${field} must be a string`);
        continue;
      }
      kept[field] = value;
    }
    if (kept.auth !== undefined) {
      if (decodeBasicAuth(kept.auth) === undefined) {
        problems.push(`${what} ${path}: auths["${registry}"].auth must be base64 of "username:password"`);
      }
    }
    out[registry] = kept;
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, value: { auths: out } };
}
