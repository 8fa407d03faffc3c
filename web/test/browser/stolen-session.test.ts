import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ApiClient, type FailureBody } from "../../../core/test/support/api-client.js";
import { McpLab } from "../../../core/test/support/mcp-lab.js";
import { SseClient } from "../../../core/test/support/sse-client.js";
import { startOtherOrigin, describeInChromium, launchChromium } from "./browser-support.js";

/**
 * Two Switchyard servers on two ports of 127.0.0.1 and a third, hostile local server. A
 * browser sends every 127.0.0.1 cookie to every port, so the hostile server gets both UIs'
 * session cookies just by being visited. Replayed from outside the browser, with everything
 * else forged, they must authorise nothing on either server; and the person stays signed in
 * to both (two servers' cookies never overwrite each other).
 */
describeInChromium("a session cookie captured by another local server", () => {
  let first: McpLab;
  let second: McpLab;
  let browser: Browser;
  let person: BrowserContext;
  const pages: Page[] = [];
  const UI_WAIT = { timeout: 20_000 };

  beforeAll(async () => {
    [first, second] = await Promise.all([McpLab.start(), McpLab.start()]);
    browser = await launchChromium();
    person = await browser.newContext({ viewport: { width: 1200, height: 800 } });
  });

  afterAll(async () => {
    await browser?.close();
    await Promise.all([first?.stop(), second?.stop()]);
  });

  async function signInTo(lab: McpLab): Promise<Page> {
    const token = lab.registry.issueClientToken({
      ttlMs: 3_600_000,
      capabilities: ["orchestration:operate"],
      ceiling: { runtimeMode: "approval-required", interactionMode: "default" },
    }).token;
    const page = await person.newPage();
    await page.goto(lab.server.url);
    await page.locator("#token").fill(token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.locator(".verbs").filter({ hasText: "read · operate" }).waitFor(UI_WAIT);
    await page.locator(".stream-live").waitFor(UI_WAIT);
    return page;
  }

  it("refuses every replay of the captured cookies, for a read, the event stream and a thread, on both servers; both UIs stay signed in", async () => {
    pages.push(await signInTo(first), await signInTo(second));
    const hostile = await startOtherOrigin("<!doctype html><title>a dev server</title><p>nothing to see</p>");
    let captured: string[];
    try {
      const visit = await person.newPage();
      await visit.goto(hostile.url);
      await visit.close();
      // Its first request, the page itself (a favicon request follows with the same cookies).
      const header = hostile.cookieHeaders[0] ?? "";
      captured = header
        .split(";")
        .map((part) => part.trim())
        .filter((part) => part.startsWith("switchyard_session"));
    } finally {
      await hostile.close();
    }
    // The browser handed the hostile server both sessions' cookies, one per server.
    expect(captured.map((cookie) => cookie.split("=")[0]).sort()).toEqual(
      [
        `switchyard_session_${first.registry.environmentId}`,
        `switchyard_session_${second.registry.environmentId}`,
      ].sort(),
    );

    const outcomes: Record<string, unknown> = {};
    for (const target of [first, second]) {
      const api = new ApiClient(target.server.apiUrl, null);
      // Everything the hostile server can forge: the UI's Origin, a same-origin fetch, and constant headers.
      for (const cookie of [...captured, captured.join("; ")]) {
        const forged = {
          cookie,
          origin: target.server.url,
          "sec-fetch-site": "same-origin",
          "x-switchyard-csrf": "1",
          "x-switchyard-page-secret": "1",
        };
        const read = await api.get("/projects", {}, forged);
        const stream = await SseClient.open(`${target.server.apiUrl}/events`, { headers: forged });
        if (stream instanceof SseClient) stream.close();
        const created = await api.post(
          "/threads",
          { projectId: target.projectId, threads: [{ title: "stolen", target: { providerInstanceId: "alpha" } }] },
          forged,
        );
        const name = `${target === first ? "first" : "second"} server, ${cookie.includes(";") ? "both cookies" : cookie.split("=")[0]}`;
        outcomes[name] = [read, stream instanceof SseClient ? { status: 200, body: {} } : stream, created].map(
          (answer) => [answer.status, (answer.body as FailureBody).error?.code],
        );
      }
    }
    expect(Object.keys(outcomes)).toHaveLength(6);
    for (const [name, answers] of Object.entries(outcomes))
      expect([name, answers]).toEqual([name, Array.from({ length: 3 }, () => [401, "invalid_token"])]);
    for (const lab of [first, second]) {
      expect(lab.host.store.select("thread", "1 = 1").filter((thread) => thread.title === "stolen")).toEqual([]);
      expect(lab.server.eventStreams.size).toBe(1);
    }

    // Both UIs are still signed in, after a reload too, and still act.
    for (const [index, page] of pages.entries()) {
      await page.reload();
      await page.locator(".verbs").filter({ hasText: "read · operate" }).waitFor(UI_WAIT);
      await page.locator(".stream-live").waitFor(UI_WAIT);
      const lab = index === 0 ? first : second;
      const status = await page.evaluate(async (projectId) => {
        const secret = (
          globalThis as unknown as { localStorage: { getItem(key: string): string } }
        ).localStorage.getItem("switchyard.pageSecret");
        const response = await fetch("/api/v1/threads", {
          method: "POST",
          headers: { "content-type": "application/json", "x-switchyard-page-secret": secret },
          body: JSON.stringify({
            projectId,
            threads: [{ title: "from the page", target: { providerInstanceId: "alpha" } }],
          }),
        });
        return response.status;
      }, lab.projectId);
      expect(status).toBe(201);
    }
  });

  it("shows the sign-in screen, not errors, to a page of this origin without the page secret, however good its cookie", async () => {
    const page = pages[0]!;
    await page.evaluate(() =>
      (globalThis as unknown as { localStorage: { removeItem(key: string): void } }).localStorage.removeItem(
        "switchyard.pageSecret",
      ),
    );
    await page.reload();
    await page.locator("#token").waitFor(UI_WAIT);
    expect(await page.getByRole("alert").count()).toBe(0);
    // The cookie is still there; on its own it is nothing.
    expect(
      (await person.cookies(first.server.url)).some(
        (cookie) => cookie.name === `switchyard_session_${first.registry.environmentId}`,
      ),
    ).toBe(true);
  });

  it("signs every tab of an origin out together, and leaves the other server's UI signed in", async () => {
    const [, otherServer] = pages;
    const here = await signInTo(first);
    const secondTab = await person.newPage();
    await secondTab.goto(first.server.url);
    // A second tab shares the session: no second sign-in.
    await secondTab.locator(".verbs").filter({ hasText: "read · operate" }).waitFor(UI_WAIT);
    await here.getByRole("button", { name: "Sign out" }).click();
    await here.locator("#token").waitFor(UI_WAIT);
    await secondTab.locator("#token").waitFor(UI_WAIT);
    await otherServer!.reload();
    await otherServer!.locator(".verbs").filter({ hasText: "read · operate" }).waitFor(UI_WAIT);
  });
});
