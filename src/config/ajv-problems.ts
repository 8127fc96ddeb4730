/**
 * ajv errors as problem texts: the path of the value as the file spells it, what it must be, and
 * the value only where the caller allows it (never a secret). Pure.
 */
import type { ErrorObject } from 'ajv';

/** `/build/platforms/0` -> `build.platforms[0]`. */
export function pointerToPath(pointer: string): string {
  if (pointer === '') return '';
  let out = '';
  for (const raw of pointer.slice(1).split('/')) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(part) ? `[${part}]` : out === '' ? part : `.${part}`;
  }
  return out;
}

const TYPE_WORDS: Record<string, string> = {
  integer: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'a boolean (true or false)',
  array: 'a list',
  object: 'a mapping (object)',
};

export interface FormatOptions {
  /** Prefix of every problem, e.g. `settings file /etc/s.yaml`. */
  readonly source: string;
  /** Whether the offending value may be shown for an error at this path. */
  readonly showValue: (path: string) => boolean;
}

/** ajv errors -> problem texts (one per error; `if` wrappers dropped). Values shown only when allowed. */
export function formatAjvErrors(errors: readonly ErrorObject[], options: FormatOptions): string[] {
  const problems: string[] = [];
  for (const error of errors) {
    const path = pointerToPath(error.instancePath);
    const at = path === '' ? '' : `${path}: `;
    const params = error.params as Record<string, unknown>;
    let text: string | undefined;
    let showValue = false;
    switch (error.keyword) {
      case 'if':
        text = undefined;
        break;
      case 'additionalProperties': {
        const key = String(params.additionalProperty);
        text = `unknown key "${path === '' ? key : `${path}.${key}`}"`;
        break;
      }
      case 'required':
        text = `${at}missing required key "${String(params.missingProperty)}"`;
        break;
      case 'type':
        text = `${at}must be ${TYPE_WORDS[String(params.type)] ?? String(params.type)}`;
        showValue = true;
        break;
      case 'enum':
        text = `${at}must be one of ${(params.allowedValues as unknown[]).map(String).join(', ')}`;
        showValue = true;
        break;
      case 'minimum':
      case 'maximum':
        text = `${at}must be ${error.keyword === 'minimum' ? '>=' : '<='} ${String(params.limit)}`;
        showValue = true;
        break;
      case 'minLength':
        text = `${at}must not be empty`;
        break;
      case 'format':
      case 'pattern': {
        const description = (error.parentSchema as { description?: unknown } | undefined)?.description;
        text = `${at}must be ${typeof description === 'string' ? description : `match ${String(params.pattern)}`}`;
        showValue = true;
        break;
      }
      case 'false schema':
        text = `${at}is not allowed for this kind of entry`;
        break;
      default:
        text = `${at}${error.message ?? 'is invalid'}`;
    }
    if (text === undefined) continue;
    if (showValue && options.showValue(path)) text += ` (got ${JSON.stringify(error.data)})`;
    problems.push(`${options.source}: ${text}`);
  }
  return problems;
}
