import test from 'ava';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderErrorsDoc } from '../../../../src/errors/docs.js';
import { ERRORS, errorText, TRANSPORT_REASONS } from '../../../../src/errors/errors.js';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const read = (path: string): string => readFileSync(join(root, path), 'utf8');

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name).slice(root.length));
}
const SOURCES = [...sourceFiles('src'), ...sourceFiles('workers')].filter(
  (f) => f !== 'src/errors/errors.ts',
);

test('docs/errors.md is generated from the error table (run `npm run docs:errors`)', (t) => {
  t.is(read('docs/errors.md'), renderErrorsDoc());
});

test('every code has a status, a text and a one-line "when"', (t) => {
  for (const [code, e] of Object.entries(ERRORS)) {
    t.regex(code, /^[A-Z][A-Z_]+$/);
    t.true(e.status >= 400 && e.status < 600, code);
    t.true(e.text.length > 0 && !e.text.includes('\n'), code);
    t.true(e.when.length > 0 && !e.when.includes('\n'), code);
  }
});

test('a text template is filled with values only', (t) => {
  t.is(errorText('BUSY', { running: 4 }), 'already running 4 builds, the maximum; retry later');
  t.is(
    errorText('REGISTRY_ANSWERED', { registry: 'r.io', status: 401, image: 'r.io/a:b' }),
    'r.io answered 401 for r.io/a:b',
  );
});

test('every code has a producer in src/ or workers/', (t) => {
  const code = SOURCES.map(read).join('\n');
  for (const errorCode of Object.keys(ERRORS)) {
    t.regex(
      code,
      new RegExp(`serviceError\\(\\s*'${errorCode}'`),
      `${errorCode} is never produced: remove it`,
    );
  }
});

test('every transport reason has a producer', (t) => {
  const code = SOURCES.map(read).join('\n');
  for (const reason of Object.keys(TRANSPORT_REASONS)) {
    t.true(code.includes(`transportReason('${reason}'`), `${reason} is never produced: remove it`);
  }
});

/** Programming errors that never reach a client as text (they end as a 500 `internal error` or at startup). */
const PLAIN_ERRORS: Readonly<Record<string, number>> = {
  'src/exec/run/command-line.ts': 1, // a secret in argv: refused before spawning
  'src/config/options.ts': 1, // an option name that the table lacks
  'src/config/version.ts': 1, // the package's own package.json missing
  'workers/reuse/commit-memo.ts': 1, // a signature's failure kept as a value for the log, never answered
  'src/ui/router.ts': 1, // the package's own package.json missing (the pages' bundle is found from it)
  'src/config/docs.ts': 1, // README markers missing (scripts only)
  'src/shutdown.ts': 1, // an abort reason, never answered
  'workers/git/host-keys.ts': 1, // pinned policy reached without a pin (credentials.ts refuses first)
  'src/http/request-id.ts': 1, // a route reached without the request-id middleware mounted
  'workers/builder/pending-cli.ts': 1, // the pre-started CLI run after it was discarded
  'src/client/http.ts': 1, // an idle request ended as Node ends one (ETIMEDOUT), then told as unreachable
  'workers/flow/queued-builds.ts': 1, // a build with credentials handed back (build-runs.ts filters them first)
  'src/redis/node-subscriber.ts': 1, // a connect cancelled by a disconnect: ioredis' own message, never answered
};

test('no error text is built at a throw site: ServiceErrors come from serviceError of src/errors/errors.ts', (t) => {
  for (const file of SOURCES) {
    const text = read(file);
    t.false(text.includes('new ServiceError('), `${file} builds a ServiceError itself`);
    t.false(/new ERROR_CLASSES\b/.test(text), `${file} builds a ServiceError itself`);
    const plain = text.split('new Error(').length - 1;
    t.is(plain, PLAIN_ERRORS[file] ?? 0, `${file}: plain Errors beyond the known programming errors`);
  }
});
