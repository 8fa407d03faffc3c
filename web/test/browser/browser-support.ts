import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";

/** Debian's Chromium (`apt-get install chromium`), or SWITCHYARD_CHROMIUM. */
export const CHROMIUM = process.env.SWITCHYARD_CHROMIUM ?? "/usr/bin/chromium";
export const chromiumInstalled = existsSync(CHROMIUM);
/** CI sets this (.ci/run), so the browser tests can never pass there by skipping. */
export const browserRequired = process.env.SWITCHYARD_REQUIRE_BROWSER === "1";

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
        axe: { run: (context: unknown, options: unknown) => Promise<{ violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[] }> };
      }
    ).axe;
    const result = await axe.run((globalThis as unknown as PageGlobals).document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } });
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
export async function startOtherOrigin(html: string): Promise<{ url: string; cookieHeaders: readonly string[]; close: () => Promise<void> }> {
  const cookieHeaders: string[] = [];
  const server: Server = createServer((req, res) => {
    if (req.headers.cookie !== undefined) cookieHeaders.push(req.headers.cookie);
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return { url: `http://127.0.0.1:${address.port}/`, cookieHeaders, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
