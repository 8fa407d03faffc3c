import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";
import { describe, it } from "vitest";
import { WEB_APP_DIR } from "../../../core/src/transports/http/web-app.js";
import type { McpLab } from "../../../core/test/support/mcp-lab.js";

/** Debian's Chromium (`apt-get install chromium`), or SWITCHYARD_CHROMIUM. */
export const CHROMIUM = process.env.SWITCHYARD_CHROMIUM ?? "/usr/bin/chromium";
export const chromiumInstalled = existsSync(CHROMIUM);
/** CI sets this (.ci/run), so the browser tests can never pass there by skipping. */
export const browserRequired = process.env.SWITCHYARD_REQUIRE_BROWSER === "1";

/**
 * Debian's Chromium, headless, for a test that runs (see {@link describeInChromium}): it must be
 * here then, and the web UI built into core/dist/web, which the server serves.
 */
export async function launchChromium(): Promise<Browser> {
  if (!chromiumInstalled)
    throw new Error(
      `SWITCHYARD_REQUIRE_BROWSER=1 but there is no Chromium at ${CHROMIUM}: apt-get install -y chromium.`,
    );
  if (!existsSync(join(WEB_APP_DIR, "index.html")))
    throw new Error(`The web UI is not built (${WEB_APP_DIR}): run npm run build.`);
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox"] });
}

/** Where the tests write their screenshots (gitignored). */
export const SCREENSHOTS = fileURLToPath(new URL("../screenshots/", import.meta.url));

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  // Transitions finish first (the drawer slides out when the viewport narrows).
  await page.screenshot({ path, fullPage: false, animations: "disabled" });
  return path;
}

/**
 * The few browser globals the tests' page.evaluate callbacks touch (they run in the page; the
 * tests themselves are typechecked without the DOM library).
 */
export interface PageGlobals {
  readonly document: {
    querySelectorAll(selector: string): { readonly length: number };
    readonly documentElement: { readonly scrollWidth: number };
  };
  readonly innerWidth: number;
  sameLoad?: boolean;
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** A violation axe-core found, as the assertion prints it. */
export interface AxeFinding {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly targets: readonly string[];
}

/**
 * Runs axe-core in the page (the page's context must bypass its CSP, which allows no injected
 * script) and returns the serious and critical violations.
 */
export async function seriousViolations(page: Page): Promise<AxeFinding[]> {
  await page.evaluate(AXE_SOURCE);
  const found = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: {
          run: (
            context: unknown,
            options: unknown,
          ) => Promise<{
            violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[];
          }>;
        };
      }
    ).axe;
    const result = await axe.run((globalThis as unknown as PageGlobals).document, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] },
    });
    return result.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      help: violation.help,
      targets: violation.nodes.slice(0, 5).map((node) => node.target.join(" ")),
    }));
  });
  return found.filter((finding) => finding.impact === "serious" || finding.impact === "critical");
}

/**
 * Another origin on loopback (another port: the same *site*), serving one attacking page, and
 * keeping the Cookie header of every request the browser made to it (cookies ignore ports, so
 * it gets every 127.0.0.1 server's cookies).
 */
export async function startOtherOrigin(
  html: string,
): Promise<{ url: string; cookieHeaders: readonly string[]; close: () => Promise<void> }> {
  const cookieHeaders: string[] = [];
  const server: Server = createServer((req, res) => {
    if (req.headers.cookie !== undefined) cookieHeaders.push(req.headers.cookie);
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return {
    url: `http://127.0.0.1:${address.port}/`,
    cookieHeaders,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Where the screenshots the docs show are kept (README, docs/ui.md). */
export const DOC_IMAGES = fileURLToPath(new URL("../../../docs/images/", import.meta.url));

/**
 * A screen at 1280 and 420 px wide, light and dark: four screenshots `<name>-<width>-<scheme>.png`
 * in test/screenshots, and in docs/images too with SWITCHYARD_DOC_IMAGES=1 (how the committed
 * ones are made). The page is left at its first size, light.
 */
export async function screenshotVariants(page: Page, name: string): Promise<string[]> {
  const original = page.viewportSize() ?? { width: 1280, height: 800 };
  const paths: string[] = [];
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const width of [1280, 420]) {
      await page.setViewportSize({ width, height: width === 1280 ? 800 : 900 });
      // A frame for the layout to follow the new size and scheme.
      await page.evaluate(() => {
        // The page itself from its top (a narrow layout scrolls the page; the timeline keeps its own place).
        (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0);
        const frame = (globalThis as unknown as { requestAnimationFrame(callback: () => void): void })
          .requestAnimationFrame;
        return new Promise<void>((resolve) => frame(() => frame(resolve)));
      });
      const file = `${name}-${width}-${scheme}`;
      paths.push(await screenshot(page, file));
      if (process.env.SWITCHYARD_DOC_IMAGES === "1") {
        mkdirSync(DOC_IMAGES, { recursive: true });
        await page.screenshot({ path: join(DOC_IMAGES, `${file}.png`), fullPage: false, animations: "disabled" });
      }
    }
  }
  await page.emulateMedia({ colorScheme: "light" });
  await page.setViewportSize(original);
  return paths;
}

/** Signs a page in with a client token, as the sign-in form does (POST /api/v1/ui/session), keeping the page secret where the UI does. */
export async function signInWithToken(page: Page, serverUrl: string, token: string): Promise<void> {
  await page.goto(serverUrl);
  await page.evaluate(async (secret) => {
    const response = await fetch("/api/v1/ui/session", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token: secret }),
    });
    if (!response.ok) throw new Error(`sign-in failed: ${response.status}`);
    (globalThis as unknown as { localStorage: { setItem(key: string, value: string): void } }).localStorage.setItem(
      "switchyard.pageSecret",
      ((await response.json()) as { pageSecret: string }).pageSecret,
    );
  }, token);
  await page.goto(serverUrl);
}

/** Chromium with one 1280×900 page, signed in on `lab`'s server as a person holding a read-only client token. */
export async function openReaderPage(lab: McpLab): Promise<{ browser: Browser; page: Page }> {
  const browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.on("pageerror", (error) => console.error("page error:", error));
  const person = await lab.registry.issueClientTokenAsync({
    ttlMs: 3_600_000,
    capabilities: ["orchestration:read"],
    ceiling: { runtimeMode: "full-access", interactionMode: "default" },
  });
  await signInWithToken(page, lab.server.url, person.token);
  return { browser, page };
}

/**
 * `describe`, when Chromium is here or required (`SWITCHYARD_REQUIRE_BROWSER=1`, as CI sets it);
 * else one skipped test whose name says what to install.
 */
export function describeInChromium(title: string, body: () => void): void {
  if (!chromiumInstalled && !browserRequired) {
    describe.skip(`${title} (skipped: no Chromium at ${CHROMIUM}; apt-get install chromium, or set SWITCHYARD_CHROMIUM)`, () => {
      it("needs Chromium", () => undefined);
    });
    return;
  }
  describe(title, body);
}
