// What signing in from the pages costs a person (`npm run bench:signin`; no stack needed): the
// service as a process (embedded mode, identities enforced, people's sign-in), a real OpenID
// Connect provider (oidc-provider on https with a CA of its own), headless Chromium. In one run,
// from opening /ui/ signed out to the builds list drawn, median of 10 each:
//   - first sign-in: a fresh browser, the provider's form filled and its consent given;
//   - returning: the provider still knows the person, only the service's session is gone.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { launchBrowser } from '../test/helpers/browser.js';
import { signInAtProvider, startProvider } from '../test/helpers/oidc-provider.js';
import { spawnService } from '../test/helpers/service-process.js';
import { freePort } from '../test/helpers/sign-in-support.js';
import { buildUiBundle } from '../test/helpers/ui-bundle.js';

const RUNS = 10;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

buildUiBundle();
const port = await freePort();
const url = `http://127.0.0.1:${String(port)}`;
const provider = await startProvider([{ clientId: 'ibs-pages', redirectUrl: `${url}/auth/callback` }], {
  alice: ['team-a'],
});
const dir = mkdtempSync(join(tmpdir(), 'ibs-bench-sign-in-'));
const settings = join(dir, 'settings.yaml');
writeFileSync(
  settings,
  stringify({
    auth: {
      mode: 'enforce',
      issuers: [{ name: 'people', issuer: provider.url, audience: 'ibs-api' }],
      rules: [
        {
          name: 'team-a',
          issuer: 'people',
          claims: { groups: 'team-a' },
          actions: ['read'],
          repositories: [{ host: '*', path: 'team-a/**' }],
        },
      ],
      browser: {
        issuer: 'people',
        clientId: 'ibs-pages',
        scopes: ['openid', 'groups'],
        redirectUrl: `${url}/auth/callback`,
      },
    },
  }),
);
const service = spawnService(['--port', String(port)], {
  SERVICE_CONFIG_PATH: settings,
  NODE_EXTRA_CA_CERTS: provider.caFile,
});
const browser = await launchBrowser([`--ignore-certificate-errors-spki-list=${provider.spki}`]);
try {
  await service.waitForLog('listening');
  const drawn = `document.querySelector('.builds[aria-busy="false"]') !== null`;
  const first: number[] = [];
  const returning: number[] = [];
  for (let run = 0; run < RUNS; run += 1) {
    const context = await browser.createBrowserContext();
    const page = await context.newPage();
    let started = performance.now();
    await page.goto(`${url}/ui/`, { waitUntil: 'domcontentloaded' });
    await signInAtProvider(page, 'alice');
    await page.waitForFunction(drawn, { polling: 'mutation' });
    first.push(performance.now() - started);
    // The service's session gone (as after its end), the provider's kept.
    await context.deleteCookie(...(await context.cookies()).filter((c) => c.name.startsWith('ibs_')));
    started = performance.now();
    await page.goto(`${url}/ui/`, { waitUntil: 'domcontentloaded' });
    await page.waitForFunction(`location.origin === ${JSON.stringify(url)} && ${drawn}`, {
      polling: 'mutation',
    });
    returning.push(performance.now() - started);
    await context.close();
  }
  console.log(
    `load average at the end: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log(
    `/ui/ signed out to the list drawn, first sign-in (provider's form and consent), median of ${RUNS}: ${median(first).toFixed(0)} ms`,
  );
  console.log(
    `/ui/ signed out to the list drawn, returning (the provider remembers the person), median of ${RUNS}: ${median(returning).toFixed(0)} ms`,
  );
} finally {
  await browser.close();
  await service.lose();
  await provider.close();
  rmSync(dir, { recursive: true, force: true });
}
