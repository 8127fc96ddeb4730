/**
 * A real browser for the web pages' tests and bench: Debian's headless Chromium
 * (`chromium-headless-shell`, installed by .ci/install.sh) driven by puppeteer-core.
 */
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

const CHROMIUM = '/usr/bin/chromium-headless-shell';

/** `args`: more of Chromium's flags (a test provider's certificate pin). */
export async function launchBrowser(args: readonly string[] = []): Promise<Browser> {
  return puppeteer.launch({
    executablePath: CHROMIUM,
    // As root (the CI machine) Chromium refuses to start sandboxed.
    args: [...(process.getuid?.() === 0 ? ['--no-sandbox'] : []), ...args],
  });
}

/** What a page did that it must not: a dialog opened, an error thrown, a CSP violation. */
export interface PageWatch {
  readonly dialogs: string[];
  readonly errors: string[];
  readonly violations: string[];
}

/** A new page of `browser` at `width` x 900, every dialog dismissed and recorded. */
export async function newPage(browser: Browser, width = 1280): Promise<{ page: Page; watch: PageWatch }> {
  const page = await browser.newPage();
  await page.setViewport({ width, height: 900 });
  const watch: PageWatch = { dialogs: [], errors: [], violations: [] };
  page.on('dialog', (dialog) => {
    watch.dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  page.on('pageerror', (err) => watch.errors.push(String(err)));
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) watch.violations.push(message.text());
  });
  return { page, watch };
}

/** The visible text of the page's main area. */
export const mainText = (page: Page): Promise<string> =>
  page.evaluate('document.getElementById("app").innerText') as Promise<string>;

/** Runs `script` (an expression, in the page) and answers its JSON value. */
export const inPage = <T>(page: Page, script: string): Promise<T> => page.evaluate(script) as Promise<T>;

/**
 * Waits until `expression` is true in `page`, asking every 100 ms: the tests of a file run at once
 * in pages of one browser, and a page behind another gets no animation frames, which
 * waitForFunction polls by unless told otherwise.
 */
export async function waitFor(page: Page, expression: string, timeout = 30_000): Promise<void> {
  await page.waitForFunction(expression, { polling: 100, timeout });
}

/**
 * Clicks the element `selector` names once it shows, found and clicked in one task of the page:
 * the pages redraw live lists in place, so an element found by one call could be gone by the
 * next. Asks every 100 ms, and needs no animation frame or viewport observer (a page behind
 * another in the same browser gets neither).
 */
export async function click(page: Page, selector: string, timeout = 30_000): Promise<void> {
  const found = `document.querySelector(${JSON.stringify(selector)})`;
  await waitFor(
    page,
    `((el) => el !== null && el.checkVisibility() && (el.click(), true))(${found})`,
    timeout,
  );
}
