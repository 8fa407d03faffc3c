import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { McpLab } from "../../../core/test/support/mcp-lab.js";
import { describeInChromium, openReaderPage, screenshot } from "./browser-support.js";

/**
 * Issue 40 in the web UI: the Agents panel shows a provider-native sub-agent (reported by the
 * harness, no thread of its own) beside an orchestrator-owned delegated task, marked native with
 * its provider, model, type and usage; and a native sub-agent of the delegated child under that
 * child's row. Real server, scripted providers (`@@subagent {json}`), Debian's Chromium.
 */
describeInChromium("native sub-agents in the Agents panel", () => {
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

  it("shows a native child beside an orchestrator-owned one, and a native grandchild under its delegated parent", async () => {
    const nested = {
      title: "lint helper",
      agentType: "linter",
      model: "alpha-small",
      usage: { inputTokens: 70, outputTokens: 7 },
    };
    const delegated = {
      task: `@@subagent ${JSON.stringify(nested)} @@reply reviewed`,
      title: "reviewer",
      target: { providerInstanceId: "alpha" },
      mode: "wait",
    };
    const native = {
      title: "repository survey",
      task: "List the packages and what each one does",
      agentType: "explorer",
      model: "alpha-large",
      usage: { inputTokens: 1200, outputTokens: 230 },
    };
    const { thread } = await lab.host.threads.createThread({
      projectId: lab.projectId,
      providerInstanceId: "alpha",
      runtimeMode: "full-access",
      title: "Planner with native helpers",
      prompt: `@@subagent ${JSON.stringify(native)} @@tool delegate_task ${JSON.stringify(delegated)} @@reply planned`,
      createdBy: "user",
      creationSource: "cli",
    });
    await lab.host.threads.waitForRun({ threadId: thread.id, timeoutMs: 20_000 });
    const task = lab.host.store.select("delegatedTask", "parent_thread_id = ?", [thread.id])[0]!;

    await page.goto(`${lab.server.url}/threads/${thread.id}`);
    await page.locator("#thread-title").filter({ hasText: "Planner with native helpers" }).waitFor(UI_WAIT);

    // The native child, marked native, with what the harness reported, and no link or Stop.
    const nativeRow = page.locator(".agents-panel > .agent-list > [data-native-subagent]");
    await nativeRow.filter({ hasText: "repository survey" }).waitFor(UI_WAIT);
    const facts = await nativeRow.locator(".agent-facts").innerText();
    expect(facts).toContain("alpha-large");
    expect(facts).toContain("explorer");
    expect(facts).toContain("1,430 tokens (part of its parent's turn)");
    expect(await nativeRow.locator(".badge-native").innerText()).toBe("native");
    expect(await nativeRow.locator(".badge-completed").count()).toBe(1);
    expect(await nativeRow.locator("a, button").count()).toBe(0);

    // Beside it, the orchestrator-owned child (a delegated task with its thread), and under
    // that child the native sub-agent its own turn spawned.
    const owned = page.locator(`.agents-panel [data-child-thread-id="${task.childThreadId}"]`);
    await owned.locator(".agent-facts").filter({ hasText: "delegated task" }).waitFor(UI_WAIT);
    const grandchild = page.locator(`.agents-panel .agent-children [data-native-subagent]`);
    await grandchild.filter({ hasText: "lint helper" }).waitFor(UI_WAIT);
    expect(await grandchild.getAttribute("data-depth")).toBe("2");
    expect(await grandchild.locator(".agent-facts").innerText()).toContain("77 tokens");
    expect(await page.locator(".agents-panel h2 .count").innerText()).toBe("3");
    await screenshot(page, "native-subagents-agents-panel");
  });

  it("shows in the attention inbox which native sub-agent asks for an approval", async () => {
    const asking = { title: "cleanup helper", approve: "rm -rf build", status: "running" };
    const { thread } = await lab.host.threads.createThread({
      projectId: lab.projectId,
      providerInstanceId: "alpha",
      runtimeMode: "full-access",
      title: "Planner whose helper asks",
      prompt: `@@subagent ${JSON.stringify(asking)} @@reply asked`,
      createdBy: "user",
      creationSource: "cli",
    });
    await page.goto(`${lab.server.url}/inbox`);
    const card = page.locator(".request").filter({ hasText: "rm -rf build" });
    await card.waitFor(UI_WAIT);
    const origin = card.locator("[data-native-subagent]");
    expect(await origin.innerText()).toContain("Asked by the provider's own sub-agent cleanup helper");
    const item = lab.host.store.select("item", "thread_id = ? AND kind = 'subagent'", [thread.id])[0]!;
    expect(await origin.getAttribute("data-native-subagent")).toBe((item.data as { nativeId: string }).nativeId);
    await screenshot(page, "native-subagent-approval-inbox");
  });
});
