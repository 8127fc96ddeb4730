// ibs stands alone: src/client imports only its own modules and Node's built-ins (no service
// module, no package), so it starts fast and can be reasoned about on its own.
import test from 'ava';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const DIR = fileURLToPath(new URL('../../../src/client', import.meta.url));

test('src/client imports only ./ modules and node: built-ins', async (t) => {
  const files = (await readdir(DIR)).filter((f) => f.endsWith('.ts'));
  t.true(files.length > 5);
  for (const file of files) {
    const text = await readFile(join(DIR, file), 'utf8');
    const specifiers = [...text.matchAll(/^(?:import|export)[^'"]*from '([^']+)'/gm)].map((m) => m[1] ?? '');
    for (const spec of specifiers) t.true(/^(\.\/[\w-]+\.js|node:[\w/]+)$/.test(spec), `${file}: ${spec}`);
  }
});
