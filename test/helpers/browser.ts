import { existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";
import { describe, it } from "vitest";
import { noticeOnce } from "./notice-once.js";

/** The system chromium (Debian package `chromium`); tests never download a browser. */
export const CHROMIUM_PATH = process.env["DEVMIND_TEST_CHROMIUM"] || "/usr/bin/chromium";

/** When set (CI, `.ci/run`), a missing chromium is a failure instead of a skip. */
export const REQUIRE_CHROMIUM = process.env["DEVMIND_REQUIRE_CHROMIUM"] === "1";

/**
 * True when there is no chromium at CHROMIUM_PATH (a fresh machine with nothing but Node): the
 * browser tier — the tests that drive the web page — is then skipped, each reported as skipped,
 * with one notice for the whole run naming the package to install, as the PostgreSQL tier does.
 */
export const BROWSER_TIER_SKIPPED = !existsSync(CHROMIUM_PATH);

/** The one notice of a run without chromium. */
export const CHROMIUM_NOTICE = `[devmind tests] skipped: no chromium at ${CHROMIUM_PATH}. The web page tests are skipped. Install the Debian package "chromium" (apt-get install chromium) or set DEVMIND_TEST_CHROMIUM=/path/to/chromium to run them.`;

if (BROWSER_TIER_SKIPPED) {
  if (REQUIRE_CHROMIUM) throw new Error(`DEVMIND_REQUIRE_CHROMIUM=1 but there is no chromium at ${CHROMIUM_PATH}`);
  noticeOnce("chromium", CHROMIUM_NOTICE);
}

/** `describe` for a block of the browser tier: skipped (reported) without chromium, see BROWSER_TIER_SKIPPED. */
export const describeWithBrowser = (BROWSER_TIER_SKIPPED ? describe.skip : describe) as typeof describe;

/** `it` for one test of the browser tier in a file whose other tests need no browser. */
export const itWithBrowser = (BROWSER_TIER_SKIPPED ? it.skip : it) as typeof it;

/** Flags for a quiet headless chromium in a container: no sandbox, no GPU, no network of its own. */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-dev-shm-usage",
];

/** Where tests keep screenshots and other artifacts (git-ignored). */
export const ARTIFACTS_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "artifacts");

/**
 * Launches the system chromium headless through playwright-core. Throws with a clear message when
 * it is not installed (`.ci/run` installs it; locally: `apt-get install chromium`).
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`no chromium at ${CHROMIUM_PATH}: install the Debian package "chromium" (or set DEVMIND_TEST_CHROMIUM)`);
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, timeout: 30_000 });
}

/** What a page did that a test should know about: console errors, page errors, dialogs. */
export interface PageProbe {
  /** Console errors other than the browser's "Failed to load resource" notes (see `failedResponses`). */
  consoleErrors: string[];
  /** Responses with a status >= 400, as `STATUS METHOD PATH`. */
  failedResponses: string[];
  pageErrors: string[];
  dialogs: string[];
  /** Requests to anything but the server's origin. */
  foreignRequests: string[];
  /** The page's requests as they went (`+ms METHOD PATH`, `+ms STATUS METHOD PATH` on a response, `+ms done|failed …` at the body's end), the newest 200: for a report when a wait runs out. */
  traffic: string[];
}

/**
 * Opens a page on `origin` that records errors, dialogs (dismissed) and requests leaving the
 * origin (aborted), so a test can assert the page stayed quiet and same-origin.
 */
export async function openProbedPage(browser: Browser, origin: string): Promise<{ page: Page; probe: PageProbe }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const probe: PageProbe = { consoleErrors: [], failedResponses: [], pageErrors: [], dialogs: [], foreignRequests: [], traffic: [] };
  const opened = Date.now();
  const note = (line: string): void => {
    probe.traffic.push(`+${Date.now() - opened}ms ${line}`);
    if (probe.traffic.length > 200) probe.traffic.shift();
  };
  const pathOf = (url: string): string => url.startsWith(origin) ? url.slice(origin.length) : url.slice(0, 40);
  page.on("request", (request) => note(`${request.method()} ${pathOf(request.url())}`));
  page.on("requestfinished", (request) => note(`done ${request.method()} ${pathOf(request.url())}`));
  page.on("requestfailed", (request) => note(`failed ${request.method()} ${pathOf(request.url())}: ${request.failure()?.errorText ?? "?"}`));
  page.on("console", (message) => {
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) probe.consoleErrors.push(message.text());
  });
  page.on("response", (response) => {
    note(`${response.status()} ${response.request().method()} ${pathOf(response.url())}`);
    if (response.status() >= 400) probe.failedResponses.push(`${response.status()} ${response.request().method()} ${new URL(response.url()).pathname}`);
  });
  page.on("pageerror", (error) => probe.pageErrors.push(error.message));
  page.on("dialog", (dialog) => {
    probe.dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith(`${origin}/`) || url.startsWith("blob:") || url.startsWith("data:")) return route.continue();
    probe.foreignRequests.push(url);
    return route.abort();
  });
  return { page, probe };
}

/** Saves a full-page screenshot under test/artifacts/ and returns its path. */
export async function saveScreenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  const path = join(ARTIFACTS_DIR, name);
  await page.screenshot({ path, fullPage: true });
  return path;
}
