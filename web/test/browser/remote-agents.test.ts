import { releaseGate } from "@switchyard/testkit/scripted-provider";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { runCli } from "../../../core/test/support/cli.js";
import { untilGatesReached } from "../../../core/test/support/gates.js";
import { mustCall } from "../../../core/test/support/mcp-client.js";
import { McpLab } from "../../../core/test/support/mcp-lab.js";
import { ReachGrants } from "../../../core/src/services/reach/reach-grants.js";
import { ReachLinks } from "../../../core/src/services/reach/reach-links.js";
import { type PageGlobals, screenshot, describeInChromium, launchChromium } from "./browser-support.js";

/**
 * Two real servers (A on 127.0.0.1, B on 127.0.0.3, B linked on A as "mac"): a person signed
 * in to A's web UI opens a thread whose agent delegated a task to B, sees the child in the
 * Agents panel with B's name while it runs there, and sees it finish, without reloading.
 */
describeInChromium("a child on a linked environment in the Agents panel", () => {
  let a: McpLab;
  let b: McpLab;
  let browser: Browser;
  let page: Page;
  const UI_WAIT = { timeout: 20_000 };

  beforeAll(async () => {
    // A on 127.0.0.1: the loopback guard admits the browser's Origin only for localhost, 127.0.0.1 and [::1].
    [a, b] = await Promise.all([McpLab.start(), McpLab.start({ listen: { host: "127.0.0.3" } })]);
    const issued = b.host.container.resolve(ReachGrants).issue({
      for: "linux",
      projects: "*",
      verbs: ["read", "delegate", "cancel"],
      maxRuntimeMode: "auto-accept-edits",
      ttlMs: 3_600_000,
    });
    a.host.container.resolve(ReachLinks).add({ name: "mac", url: b.server.url, secret: issued.secret });
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1400, height: 860 } })).newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await Promise.all([a?.stop(), b?.stop()]);
  });

  it("shows the child with B's name while it runs on B, then finished with its reply, live", async () => {
    const cli = await runCli(["ui", "--home", a.t.home, "--url", a.server.url, "--json"]);
    expect(cli.code, cli.stderr).toBe(0);
    await page.goto((JSON.parse(cli.stdout) as { link: string }).link);
    await page.locator(".verbs").waitFor(UI_WAIT);

    const parent = await a.liveAgent({ title: "linux setup parent" });
    const started = await mustCall<{ taskId: string; childThreadId: string; childThreadLink: string }>(
      parent.client,
      "delegate_task",
      {
        task: "@@gate mac-setup @@reply Mac set up: brew, node 22, the repo cloned.",
        title: "set up the mac",
        target: { providerInstanceId: "alpha", model: "alpha-large" },
        environmentId: "mac",
        mode: "async",
      },
    );
    await untilGatesReached(b.t.gateDir, ["mac-setup"]);

    await page.locator(`.sidebar a[data-thread-id="${parent.threadId}"]`).click();
    await page.locator("#thread-title").filter({ hasText: "linux setup parent" }).waitFor(UI_WAIT);
    await page.evaluate(() => ((globalThis as unknown as PageGlobals).sameLoad = true));
    const row = page.locator(`.agents-panel [data-remote-task-id="${started.taskId}"]`);
    await row
      .locator(".badge")
      .filter({ hasText: /^running$/ })
      .waitFor(UI_WAIT);
    expect(await row.locator(".agent-where").textContent()).toBe("on mac");
    expect(await row.locator(".thread-link").textContent()).toBe(
      `switchyard-thread://v2/${b.registry.environmentId}/${started.childThreadId}`,
    );
    expect(await row.locator(".agent-facts").textContent()).toContain("alpha-large");
    // Not a link into this server: the thread lives on B.
    expect(await row.locator("a").count()).toBe(0);
    await screenshot(page, "remote-child-running");

    releaseGate(b.t.gateDir, "mac-setup");
    parent.release();
    await row
      .locator(".badge")
      .filter({ hasText: /^completed$/ })
      .waitFor(UI_WAIT);
    await row
      .locator(".last-reply")
      .filter({ hasText: "Mac set up: brew, node 22, the repo cloned." })
      .waitFor(UI_WAIT);
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).sameLoad)).toBe(true);
    await screenshot(page, "remote-child-finished");
  });

  it("keeps a local child's task current from task.updated events (its usage fills in without a reload)", async () => {
    const parent = await a.liveAgent({ title: "local parent" });
    await page.locator(`.sidebar a[data-thread-id="${parent.threadId}"]`).click();
    await page.locator("#thread-title").filter({ hasText: "local parent" }).waitFor(UI_WAIT);
    // The child is created after the page loaded: only the stream can bring its task.
    const started = await mustCall<{ childThreadId: string }>(parent.client, "delegate_task", {
      task: "@@reply LOCAL-DONE",
      title: "local child",
      target: { providerInstanceId: "alpha" },
      mode: "async",
    });
    const row = page.locator(`.agents-panel [data-child-thread-id="${started.childThreadId}"]`);
    await row.locator(".last-reply").filter({ hasText: "LOCAL-DONE" }).waitFor(UI_WAIT);
    await row.locator("[data-usage]").filter({ hasNotText: "reading…" }).waitFor(UI_WAIT);
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).sameLoad)).toBe(true);
    parent.release();
  });
});
