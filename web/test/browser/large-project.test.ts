import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { McpLab } from "../../../core/test/support/mcp-lab.js";
import {
  screenshot,
  seriousViolations,
  signInWithToken,
  describeInChromium,
  launchChromium,
} from "./browser-support.js";

/** What these tests read in the page (they are typechecked without the DOM library). */
interface SidebarGlobals {
  readonly document: {
    querySelector(selector: string): {
      scrollTop: number;
      readonly scrollHeight: number;
      readonly clientHeight: number;
      getAttribute(name: string): string | null;
      scrollTo(options: { top: number }): void;
    } | null;
    readonly activeElement: { closest(selector: string): { getAttribute(name: string): string | null } | null } | null;
  };
}

const THREADS = 1_000;

/**
 * A real server with a project of 1,000 idle threads: the sidebar lists every one (its list
 * counts them, scrolling reaches the oldest, the filter finds it, Tab walks on past the rows
 * on screen), while the page holds only the rows near the screen.
 */
describeInChromium("a project of 1,000 threads in the sidebar", () => {
  let lab: McpLab;
  let browser: Browser;
  let page: Page;
  let projectId: string;
  const ids: string[] = [];
  const cspViolations: string[] = [];
  const UI_WAIT = { timeout: 20_000 };
  const list = () => page.locator(`.project[data-project-id="${projectId}"] .main-list`);
  /** The list once it holds this many rows (in the page or not). */
  const listOf = (rows: number) =>
    page.locator(`.project[data-project-id="${projectId}"] .main-list[data-rows="${rows}"]`);
  const rowsInPage = () => list().locator("a[data-thread-id]").count();

  beforeAll(async () => {
    lab = await McpLab.start();
    const project = await lab.host.projects.add(mkdtempSync(join(lab.t.home, "big-")), "big");
    projectId = project.id;
    // Oldest first: the sidebar lists them newest first, so the first made is its last row.
    for (let i = 0; i < THREADS; i += 1) {
      const { thread } = await lab.host.threads.createThread({
        projectId,
        providerInstanceId: "alpha",
        title: i === 0 ? "the very first thread" : `thread ${i + 1}`,
        createdBy: "user",
        creationSource: "api",
      });
      ids.push(thread.id);
    }
    const { token } = lab.registry.issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:read"] });
    browser = await launchChromium();
    // The app's own CSP is kept: the lists' padding is set through the DOM, which it allows.
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    page.on("console", (message) => {
      if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
    });
    await signInWithToken(page, lab.server.url, token);
  });

  afterAll(async () => {
    await browser?.close();
    await lab?.stop();
  });

  it("counts all 1,000 and puts only the rows near the screen in the page, each saying where it sits", async () => {
    await listOf(THREADS).waitFor(UI_WAIT);
    const newest = list().locator(`a[data-thread-id="${ids[THREADS - 1]}"]`);
    await newest.waitFor(UI_WAIT);
    await expect(newest.locator("xpath=..").getAttribute("aria-posinset")).resolves.toBe("1");
    await expect(newest.locator("xpath=..").getAttribute("aria-setsize")).resolves.toBe(String(THREADS));
    const inPage = await rowsInPage();
    // A screenful and some: 800 px hold about 15 rows.
    expect(inPage).toBeGreaterThan(10);
    expect(inPage).toBeLessThan(100);
    // The rest stand as padding of their height, so the scrollbar is the whole list's.
    const heights = await page.evaluate(() => {
      const sidebar = (globalThis as unknown as SidebarGlobals).document.querySelector("#sidebar")!;
      return { scroll: sidebar.scrollHeight, row: 3.4 * 15 };
    });
    expect(heights.scroll).toBeGreaterThan(THREADS * heights.row * 0.95);
    await screenshot(page, "sidebar-1000-threads");
    expect(cspViolations).toEqual([]);
  });

  it("reaches the oldest thread by scrolling to the bottom, and the newest again at the top", async () => {
    const scrollTo = (where: "top" | "bottom") =>
      page.evaluate((to) => {
        const sidebar = (globalThis as unknown as SidebarGlobals).document.querySelector("#sidebar")!;
        sidebar.scrollTo({ top: to === "top" ? 0 : sidebar.scrollHeight });
      }, where);
    await scrollTo("bottom");
    const oldest = list().locator(`a[data-thread-id="${ids[0]}"]`);
    await oldest.waitFor(UI_WAIT);
    await expect(oldest.locator("xpath=..").getAttribute("aria-posinset")).resolves.toBe(String(THREADS));
    expect(await oldest.isVisible()).toBe(true);
    expect(await rowsInPage()).toBeLessThan(100);
    await screenshot(page, "sidebar-1000-threads-bottom");
    await scrollTo("top");
    await list()
      .locator(`a[data-thread-id="${ids[THREADS - 1]}"]`)
      .waitFor(UI_WAIT);
    await list()
      .locator(`a[data-thread-id="${ids[0]}"]`)
      .waitFor({ state: "detached", ...UI_WAIT });
  });

  it("walks on with Tab past the last row in the page", async () => {
    const last = list().locator("li:last-child a[data-thread-id]");
    const position = Number(await last.locator("xpath=..").getAttribute("aria-posinset"));
    expect(position).toBeLessThan(THREADS);
    await last.focus();
    // The focused row scrolled into view, so the rows after it are in the page.
    await list()
      .locator(`li[aria-posinset="${position + 1}"]`)
      .waitFor(UI_WAIT);
    await page.keyboard.press("Tab");
    const focused = await page.evaluate(
      () =>
        (globalThis as unknown as SidebarGlobals).document.activeElement
          ?.closest("li")
          ?.getAttribute("aria-posinset") ?? null,
    );
    expect(focused).toBe(String(position + 1));
  });

  it("filters all 1,000 by title, the oldest included, and lists them all again when cleared", async () => {
    await page.locator("#thread-filter").fill("very first");
    await listOf(1).waitFor(UI_WAIT);
    await list().locator(`a[data-thread-id="${ids[0]}"]`).waitFor(UI_WAIT);
    expect(await rowsInPage()).toBe(1);
    await page.locator("#thread-filter").fill("thread 99");
    // thread 99 and thread 990 to 999.
    await listOf(11).waitFor(UI_WAIT);
    expect(await rowsInPage()).toBe(11);
    await page.locator(".clear-filters").click();
    await listOf(THREADS).waitFor(UI_WAIT);
    expect(await rowsInPage()).toBeLessThan(100);
  });

  it("reads the 1,000 as rows in one request, and a thread's shell when it opens", async () => {
    const lists: URL[] = [];
    const listed = (request: { url(): string }) => {
      const url = new URL(request.url());
      if (url.pathname === "/api/v1/threads" && url.searchParams.get("projectId") === projectId) lists.push(url);
    };
    page.on("request", listed);
    try {
      await page.reload();
      await listOf(THREADS).waitFor(UI_WAIT);
      expect(lists.map((url) => Object.fromEntries(url.searchParams))).toEqual([
        { projectId, includeSubagents: "true", limit: "1000", offset: "0", view: "row" },
      ]);
    } finally {
      page.off("request", listed);
    }
    // A row has no modes: the header shows them from the shell read as the thread opens.
    await list()
      .locator(`a[data-thread-id="${ids[THREADS - 1]}"]`)
      .click();
    await page
      .locator(".thread-header .thread-meta", { hasText: "alpha · approval-required · default" })
      .waitFor(UI_WAIT);
  });

  it("has no serious accessibility violations with a windowed list", async () => {
    // axe-core is injected, which the app's CSP refuses: a second page whose context bypasses it.
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, bypassCSP: true });
    try {
      const checked = await context.newPage();
      const { token } = lab.registry.issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:read"] });
      await signInWithToken(checked, lab.server.url, token);
      await checked
        .locator(`.project[data-project-id="${projectId}"] .main-list[data-rows="${THREADS}"] a[data-thread-id]`)
        .first()
        .waitFor(UI_WAIT);
      expect(await seriousViolations(checked)).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("shows the page around the lists while the threads are on their way: the project list counts them", async () => {
    await page.goto(lab.server.url);
    await listOf(THREADS).waitFor(UI_WAIT);
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route("**/api/v1/threads?*", async (route) => {
      if (new URL(route.request().url()).searchParams.get("view") === "row") await held;
      // A request the page dropped meanwhile (it went elsewhere) is not continued.
      await route.continue().catch(() => undefined);
    });
    try {
      await page.reload();
      // Set up (the project holds threads), so the home page is the composer, not "Loading…";
      // the sidebar's list says it is loading rather than "No threads yet".
      await page.locator("main.new-thread-page h1", { hasText: "New thread" }).waitFor(UI_WAIT);
      await list().locator("li.empty", { hasText: "Loading…" }).waitFor(UI_WAIT);
      expect(await rowsInPage()).toBe(0);
      release();
      await listOf(THREADS).waitFor(UI_WAIT);
      await list().locator("a[data-thread-id]").first().waitFor(UI_WAIT);
    } finally {
      release();
      await page.unroute("**/api/v1/threads?*");
    }
  });

  // Last: it adds a thread to the project.
  it("lists a thread made while the event stream opens: the threads are read once the stream follows the log", async () => {
    let made: string | null = null;
    let rowsAsked = false;
    const asked = (request: { url(): string }) => {
      if (new URL(request.url()).searchParams.get("view") === "row") rowsAsked = true;
    };
    page.on("request", asked);
    // The stream's request is held in the browser until the page asked for the rows (or a second
    // passed), then a thread is made and the stream goes on: it follows the log from after that
    // thread. A list read before the stream's answer would miss it, and so would the stream.
    await page.route("**/api/v1/events*", async (route) => {
      if (made === null) {
        for (let waited = 0; !rowsAsked && waited < 1_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
        // Give a rows request the page did send the time to be answered before the thread is made.
        if (rowsAsked) await new Promise((r) => setTimeout(r, 500));
        const { thread } = await lab.host.threads.createThread({
          projectId,
          providerInstanceId: "alpha",
          title: "made while the stream opened",
          createdBy: "user",
          creationSource: "api",
        });
        made = thread.id;
      }
      await route.continue();
    });
    try {
      await page.reload();
      // The reload is done before the stream's request goes on: the thread is made then.
      await expect.poll(() => made, UI_WAIT).not.toBeNull();
      // The newest thread, first in the list (the project list counted 1,000: its one page of 1,000 holds it).
      await list().locator(`a[data-thread-id="${made}"]`).waitFor(UI_WAIT);
    } finally {
      await page.unroute("**/api/v1/events*");
      page.off("request", asked);
    }
  });
});
