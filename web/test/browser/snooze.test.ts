import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ApiClient, ok } from "../../../core/test/support/api-client.js";
import { McpLab } from "../../../core/test/support/mcp-lab.js";
import {
  screenshot,
  seriousViolations,
  signInWithToken,
  describeInChromium,
  launchChromium,
} from "./browser-support.js";

/**
 * A person snoozes a finished thread from its menu (1 hour, then a custom time), sees it move
 * to the sidebar's Snoozed section, and unsnoozes it back to the main list.
 */
describeInChromium("snooze in the web UI", () => {
  let lab: McpLab;
  let browser: Browser;
  let page: Page;
  let operator: ApiClient;
  const UI_WAIT = { timeout: 20_000 };

  beforeAll(async () => {
    lab = await McpLab.start();
    const token = (capabilities: ("orchestration:read" | "orchestration:operate")[]) =>
      lab.registry.issueClientToken({
        ttlMs: 3_600_000,
        capabilities,
        ceiling: { runtimeMode: "full-access", interactionMode: "default" },
      }).token;
    operator = new ApiClient(lab.server.apiUrl, token(["orchestration:operate"]));
    browser = await launchChromium();
    // bypassCSP: axe-core is injected into the page.
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 }, bypassCSP: true })).newPage();
    await signInWithToken(page, lab.server.url, token(["orchestration:operate"]));
  });

  afterAll(async () => {
    await browser?.close();
    await lab?.stop();
  });

  it("snoozes a thread from its menu into the Snoozed section, refuses a past custom time, and unsnoozes it", async () => {
    const created = await ok(
      operator.post("/threads", {
        projectId: lab.projectId,
        threads: [
          {
            prompt: "@@reply release notes drafted",
            title: "Release notes",
            target: { providerInstanceId: "alpha" },
          },
        ],
      }),
      201,
    );
    const threadId = created.threads[0].thread.threadId as string;
    await ok(operator.get(`/threads/${threadId}/wait`));
    const row = (where: string) => page.locator(`#sidebar ${where} a[data-thread-id="${threadId}"]`);
    await page.reload();
    await row(".main-list").click(UI_WAIT);
    await page.locator("#thread-title").filter({ hasText: "Release notes" }).waitFor(UI_WAIT);
    await page.locator('[data-section="snoozed"] .section-toggle[aria-expanded="false"]').click();

    // 1 hour: it leaves the main list for Snoozed, and the server says until when.
    await page.getByRole("button", { name: "Snooze…" }).click();
    await screenshot(page, "snooze-menu");
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByRole("group", { name: "Snooze until" }).getByRole("button", { name: "1 hour" }).click();
    await row('[data-section="snoozed"]').waitFor(UI_WAIT);
    expect(await row(".main-list").count()).toBe(0);
    const snoozed = lab.host.store.get("thread", threadId)!;
    expect(Date.parse(snoozed.snoozedUntil!) - Date.now()).toBeGreaterThan(50 * 60_000);
    await screenshot(page, "snoozed-section");

    // Unsnooze: back to the main list.
    await page.getByRole("button", { name: "Unsnooze", exact: true }).click();
    await row(".main-list").waitFor(UI_WAIT);
    expect(await row('[data-section="snoozed"]').count()).toBe(0);
    expect(lab.host.store.get("thread", threadId)!.snoozedUntil).toBeNull();

    // A custom time in the past is refused in the menu; a future one snoozes it until then.
    await page.getByRole("button", { name: "Snooze…" }).click();
    const custom = page.getByLabel("Custom time");
    await custom.fill("2001-01-01T09:00");
    await page
      .getByRole("group", { name: "Snooze until" })
      .getByRole("button", { name: "Snooze", exact: true })
      .click();
    await page.getByRole("alert").filter({ hasText: "Pick a time in the future." }).waitFor(UI_WAIT);
    expect(lab.host.store.get("thread", threadId)!.snoozedUntil).toBeNull();
    await custom.fill("2999-01-01T09:00");
    await page
      .getByRole("group", { name: "Snooze until" })
      .getByRole("button", { name: "Snooze", exact: true })
      .click();
    await row('[data-section="snoozed"]').waitFor(UI_WAIT);
    expect(lab.host.store.get("thread", threadId)!.snoozedUntil!.startsWith("2999-01-0")).toBe(true);
    await page.getByRole("button", { name: "Unsnooze", exact: true }).click();
    await row(".main-list").waitFor(UI_WAIT);

    // A snooze made elsewhere (the CLI, another page) reaches this page by the thread.snoozed event.
    await ok(operator.post(`/threads/${threadId}/snooze`, { until: "2999-01-01T00:00:00Z" }));
    await row('[data-section="snoozed"]').waitFor(UI_WAIT);
    await ok(operator.post(`/threads/${threadId}/unsnooze`, {}));
    await row(".main-list").waitFor(UI_WAIT);
  });
});
