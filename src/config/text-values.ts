/**
 * Typing of option values given as text (flags and environment variables). Pure: no I/O.
 * Booleans are exactly `true`/`false`; integers and numbers are decimal; lists are comma-separated with
 * items trimmed and empty items dropped.
 */
import type { OptionSpec, OptionValue } from './options.js';

export type TextResult = { ok: true; value: OptionValue | undefined } | { ok: false; problem: string };

export function valueFromText(option: OptionSpec, text: string): TextResult {
  switch (option.type) {
    case 'boolean':
      if (text === 'true') return { ok: true, value: true };
      if (text === 'false') return { ok: true, value: false };
      return { ok: false, problem: 'must be true or false' };
    case 'integer':
      if (!/^[+-]?\d+$/.test(text)) return { ok: false, problem: 'must be an integer' };
      return { ok: true, value: Number(text) };
    case 'number':
      if (!/^[+-]?(\d+\.?\d*|\.\d+)$/.test(text)) return { ok: false, problem: 'must be a number' };
      return { ok: true, value: Number(text) };
    case 'list':
      return {
        ok: true,
        value: text
          .split(',')
          .map((item) => item.trim())
          .filter((item) => item !== ''),
      };
    case 'string':
      // An explicitly empty value unsets an option without default; others must not be empty.
      if (text === '' && option.default === undefined) return { ok: true, value: undefined };
      return { ok: true, value: text };
  }
}
