import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "@switchyard/testkit/scripted-provider";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { acpAgentInstance, GROK_PLUGIN_DIR } from "../../../core/test/support/acp-agent-instance.js";
import { runCli } from "../../../core/test/support/cli.js";
import { makeGitRepo, type GitRepo } from "../../../core/test/support/git-repo.js";
import { mustCall } from "../../../core/test/support/mcp-client.js";
import { defaultProviders, McpLab } from "../../../core/test/support/mcp-lab.js";
import { screenshot, seriousViolations, describeInChromium, launchChromium } from "./browser-support.js";

/**
 * A person in the web UI opens a parent whose two children each rewrote one file in their own
 * worktree: the Agents panel shows each child's change set and its diff; Apply brings the
 * first into the parent's workspace, the second's Apply is a conflict shown as one (nothing
 * changed), and Discard removes it. A session whose ceiling needs approvals is refused Apply.
 */
describeInChromium("a child's worktree in the Agents panel", () => {
  let lab: McpLab;
  let repo: GitRepo;
  let browser: Browser;
  const UI_WAIT = { timeout: 20_000 };

  beforeAll(async () => {
    lab = await McpLab.start({
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR, GROK_PLUGIN_DIR],
      providers: (dirs) => [...defaultProviders(dirs), acpAgentInstance("acp", dirs)],
    });
    repo = makeGitRepo({ "plan.txt": "the original plan\n" });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await lab?.stop();
    repo?.cleanup();
  });

  async function signedIn(maxRuntimeMode: string): Promise<Page> {
    const cli = await runCli([
      "ui",
      "--home",
      lab.t.home,
      "--url",
      lab.server.url,
      "--max-runtime-mode",
      maxRuntimeMode,
      "--json",
    ]);
    expect(cli.code, cli.stderr).toBe(0);
    const page = await (
      await browser.newContext({ viewport: { width: 1400, height: 900 }, bypassCSP: true })
    ).newPage();
    await page.goto((JSON.parse(cli.stdout) as { link: string }).link);
    await page.locator(".verbs").waitFor(UI_WAIT);
    return page;
  }

  it("shows each child's changes and diff; Apply, a conflict that changes nothing, Discard; refused to a session that needs approvals", async () => {
    const projectId = (await lab.host.projects.add(repo.path, "plans")).id;
    const parent = await lab.liveAgent({ projectId, title: "planning parent" });
    const children: { childThreadId: string }[] = [];
    for (const label of ["first", "second", "third"]) {
      children.push(
        await mustCall<{ childThreadId: string }>(parent.client, "delegate_task", {
          task: `@write ${label === "third" ? "notes.txt" : "plan.txt"} the ${label} child's plan\n@say ${label} done`,
          title: `${label} planner`,
          target: { providerInstanceId: "acp" },
          workspace: "worktree",
        }),
      );
    }
    for (const child of children)
      expect(
        (await lab.host.threads.waitForRun({ threadId: child.childThreadId, timeoutMs: 60_000 })).run?.status,
      ).toBe("completed");
    await lab.host.drainEffects();
    const start = repo.head();

    const careful = await signedIn("approval-required");
    await careful.locator(`.sidebar a[data-thread-id="${parent.threadId}"]`).click();
    const carefulRow = careful.locator(`.agents-panel [data-child-thread-id="${children[0]!.childThreadId}"]`);
    await carefulRow.locator(".changes-state").filter({ hasText: "1 file changed" }).waitFor(UI_WAIT);
    await carefulRow.getByRole("button", { name: "Apply to parent" }).click();
    await carefulRow.locator(".changes-outcome.error").filter({ hasText: "approval-required" }).waitFor(UI_WAIT);
    expect(repo.head()).toBe(start);

    const page = await signedIn("auto-accept-edits");
    await page.locator(`.sidebar a[data-thread-id="${parent.threadId}"]`).click();
    await page.locator("#thread-title").filter({ hasText: "planning parent" }).waitFor(UI_WAIT);
    const first = page.locator(`.agents-panel [data-child-thread-id="${children[0]!.childThreadId}"]`);
    const second = page.locator(`.agents-panel [data-child-thread-id="${children[1]!.childThreadId}"]`);
    await first.locator(".changes-state").filter({ hasText: "1 file changed, +1 −1, 1 commit" }).waitFor(UI_WAIT);
    await first.getByRole("button", { name: "Show changes" }).click();
    await first.locator(".diff").filter({ hasText: "+the first child's plan" }).waitFor(UI_WAIT);
    expect(await first.locator(".changes-files").textContent()).toContain("plan.txt");
    await screenshot(page, "worktree-changes-diff");
    expect(await seriousViolations(page)).toEqual([]);

    await first.getByRole("button", { name: "Apply to parent" }).click();
    await first
      .locator(".changes-outcome.outcome")
      .filter({ hasText: "Applied to the parent's workspace" })
      .waitFor(UI_WAIT);
    expect(repo.read("plan.txt")).toBe("the first child's plan");
    const afterFirst = repo.head();

    await second.getByRole("button", { name: "Apply to parent" }).click();
    await second
      .locator(".changes-outcome.error")
      .filter({ hasText: "Conflict in plan.txt: nothing was changed." })
      .waitFor(UI_WAIT);
    expect(repo.head()).toBe(afterFirst);
    expect(repo.read("plan.txt")).toBe("the first child's plan");
    expect(repo.status()).toBe("");
    await screenshot(page, "worktree-changes-conflict");

    const branch = lab.host.store.get("workspace", `workspace:${children[1]!.childThreadId}`)!.branch!;
    await second.getByRole("button", { name: "Discard" }).click();
    await second.locator(".changes-outcome").filter({ hasText: "Discarded" }).waitFor(UI_WAIT);
    await second.locator(".changes-state").filter({ hasText: "removed (discarded)" }).waitFor(UI_WAIT);
    expect(repo.branches()).not.toContain(branch);
    expect(await second.getByRole("button", { name: "Apply to parent" }).count()).toBe(0);

    // The parent agent applies the third child's changes over MCP: the panel shows it, pushed.
    const third = page.locator(`.agents-panel [data-child-thread-id="${children[2]!.childThreadId}"]`);
    await third.locator(".changes-state").filter({ hasText: "1 file changed" }).waitFor(UI_WAIT);
    expect(await mustCall(parent.client, "apply_changes", { threadId: children[2]!.childThreadId })).toMatchObject({
      outcome: { outcome: "applied" },
    });
    await third.locator(".changes-state").filter({ hasText: "· applied" }).waitFor(UI_WAIT);
    expect(repo.read("notes.txt")).toBe("the third child's plan");
    parent.release();
  }, 180_000);
});
