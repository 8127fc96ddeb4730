/**
 * Parses JSON with comments and trailing commas, the dialect of devcontainer.json (pure).
 * Comments and trailing commas outside strings are removed, then JSON.parse does the rest.
 */
export function parseJsonc(text: string): unknown {
  let out = '';
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i];
    if (c === '"') {
      const start = i;
      i++;
      while (i < n && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      i++;
      out += text.slice(start, i);
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < n && text[i] !== '\n') i++;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? n : end + 2;
      out += ' ';
    } else {
      out += c;
      i++;
    }
  }
  // A comma followed only by whitespace before `}` or `]` (strings are intact, so scan again).
  let result = '';
  for (let j = 0; j < out.length; j++) {
    const c = out[j];
    if (c === '"') {
      const start = j;
      j++;
      while (j < out.length && out[j] !== '"') j += out[j] === '\\' ? 2 : 1;
      result += out.slice(start, j + 1);
      continue;
    }
    if (c === ',') {
      let k = j + 1;
      while (k < out.length && /\s/.test(out[k] ?? '')) k++;
      if (out[k] === '}' || out[k] === ']') continue;
    }
    result += c;
  }
  return JSON.parse(result) as unknown;
}
