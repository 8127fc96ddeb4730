/**
 * The web pages under /ui/: a static bundle built by esbuild from src/ui/pages (`npm run build:ui`,
 * part of `npm run build`) into the package's dist/ui, served as files. Every other /ui/ path
 * answers the page shell, whose script routes on the client. The pages read the public JSON API
 * with the caller's own token, exactly as a script would: serving them needs no identity.
 */
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context, Middleware } from 'koa';

/** The bundle's files, by the name they are served under, and their types. */
const FILES: Readonly<Record<string, string>> = {
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
};

/** No inline script or style: the shell loads its two files from the service itself. */
const UI_SHELL = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Image Build Service</title>
<link rel="stylesheet" href="/ui/app.css">
<script type="module" src="/ui/app.js"></script>
</head>
<body><main id="app" aria-live="polite"></main></body>
</html>
`;

const UI_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': "default-src 'self'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

/** The folder of the built bundle: `dist/ui` of the package this module belongs to. */
function bundleDir(from = dirname(fileURLToPath(import.meta.url))): string {
  let dir = from;
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${from}`);
    dir = parent;
  }
  return join(dir, 'dist', 'ui');
}

function secure(koaCtx: Context): void {
  for (const [name, value] of Object.entries(UI_HEADERS)) koaCtx.set(name, value);
}

/**
 * The middleware of GET (and HEAD) /ui and /ui/*; anything else passes on. `dir` holds the
 * bundle (default: the package's dist/ui). A page, not an operation of the API: docs/ui.md.
 */
export function createUiRouter(dir = bundleDir()): Middleware {
  const cache = new Map<string, Buffer>();
  return async (koaCtx, next) => {
    const { path } = koaCtx;
    if (
      (koaCtx.method !== 'GET' && koaCtx.method !== 'HEAD') ||
      !(path === '/ui' || path.startsWith('/ui/'))
    ) {
      return next();
    }
    secure(koaCtx);
    koaCtx.set('Cache-Control', 'no-cache');
    if (path === '/ui') {
      koaCtx.redirect('/ui/');
      return;
    }
    const name = path.slice('/ui/'.length);
    const type = Object.hasOwn(FILES, name) ? FILES[name] : undefined;
    if (type === undefined) {
      koaCtx.type = 'text/html; charset=utf-8';
      koaCtx.body = UI_SHELL;
      return;
    }
    let body = cache.get(name);
    if (body === undefined) {
      body = await readFile(join(dir, name));
      cache.set(name, body);
    }
    koaCtx.type = type;
    koaCtx.body = body;
  };
}
