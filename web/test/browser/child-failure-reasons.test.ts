import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { mustCall } from "../../../core/test/support/mcp-client.js";
import { McpLab } from "../../../core/test/support/mcp-lab.js";
import { describeInChromium, openReaderPage, screenshot } from "./browser-support.js";

/**
 * Seed 003 in the web UI: a child whose provider hit a quota or capacity limit fails, and its
 * parent's page says why, in plain words, on the child's row in the Agents panel and on the
 * child's row in the parent's timeline: for a delegated task and for a router child. Real
 * server, scripted providers (`@@limit`), Debian's Chromium.
 */
describeInChromium("why a child failed, on its parent's page", () => {
  let lab: McpLab;
  let browser: Browser;
  let page: Page;
  const UI_WAIT = { timeout: 20_000 };

  beforeAll(async () => {
    lab = await McpLab.start();
    ({ browser, page } = await openReaderPage(lab));
  });

  afterAll(async () => {
    await browser?.close();
    await lab?.stop();
  });

  it("shows the limit a delegated child and a router child failed on, on their rows", async () => {
    const parent = await lab.liveAgent({ instance: "alpha", title: "Parent of limited children" });
    const task = await mustCall<{ taskId: string; childThreadId: string }>(parent.client, "delegate_task", {
      task: "@@limit quota free_tier_limit Free tier limit reached for muse-spark-free; retrying in 30 s",
      title: "Quota child",
      mode: "async",
    });
    const created = await mustCall<{ threads: { thread: { threadId: string } }[] }>(
      await lab.client(),
      "create_threads",
      {
        threads: [
          {
            prompt: "@@limit capacity model_overloaded The model is overloaded; retrying",
            title: "Capacity child",
            target: { providerInstanceId: "beta" },
            parentThreadId: parent.threadId,
          },
        ],
        clientRequestId: "capacity-child-in-the-ui",
      },
    );
    const routerChildId = created.threads[0]!.thread.threadId;

    await page.goto(`${lab.server.url}/threads/${parent.threadId}`);
    await page.locator("#thread-title").filter({ hasText: "Parent of limited children" }).waitFor(UI_WAIT);

    // The Agents panel: each failed child's row says it failed and why.
    const quotaRow = page.locator(`[data-child-thread-id="${task.childThreadId}"]`);
    const capacityRow = page.locator(`[data-child-thread-id="${routerChildId}"]`);
    await quotaRow.locator(".badge-failed").waitFor(UI_WAIT);
    await capacityRow.locator(".badge-failed").waitFor(UI_WAIT);
    await quotaRow.locator("[data-failure-reason]").waitFor(UI_WAIT);
    await capacityRow.locator("[data-failure-reason]").waitFor(UI_WAIT);
    expect(await quotaRow.locator("[data-failure-reason]").innerText()).toMatch(
      /^Failed: The provider hit a quota limit \(free_tier_limit\): Free tier limit reached for muse-spark-free/,
    );
    expect(await capacityRow.locator("[data-failure-reason]").innerText()).toMatch(
      /^Failed: The provider hit a capacity limit \(model_overloaded\): The model is overloaded/,
    );

    // The parent's timeline (activity): the children's rows are failed, with the same reason.
    await page.getByRole("button", { name: "Activity", exact: true }).click();
    const timelineReasons = page.locator(".kind-subagent [data-failure-reason]");
    await timelineReasons.nth(1).waitFor(UI_WAIT);
    const texts = await timelineReasons.allInnerTexts();
    expect(texts).toEqual(
      expect.arrayContaining([
        expect.stringContaining("quota limit (free_tier_limit)"),
        expect.stringContaining("capacity limit (model_overloaded)"),
      ]),
    );
    await screenshot(page, "child-failure-reasons");
    parent.release();
  });
});
