import { releaseGate } from "@switchyard/testkit/scripted-provider";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ApiClient, ok } from "../../../core/test/support/api-client.js";
import { untilGatesReached } from "../../../core/test/support/gates.js";
import { mustCall } from "../../../core/test/support/mcp-client.js";
import { McpLab } from "../../../core/test/support/mcp-lab.js";
import { ReachGrants } from "../../../core/src/services/reach/reach-grants.js";
import { ReachLinks } from "../../../core/src/services/reach/reach-links.js";
import {
  type PageGlobals,
  screenshotVariants,
  seriousViolations,
  signInWithToken,
  describeInChromium,
  launchChromium,
} from "./browser-support.js";

/** An answer an agent might write: headings, a list, a table, code, links, an image, and HTML that must stay text. */
const MARKDOWN_ANSWER = [
  "### Findings",
  "",
  "The build fails in **two** places:",
  "",
  "1. `src/app.ts` reads an unset variable",
  "2. the test runner times out",
  "",
  "| file | problem |",
  "|---|---|",
  "| src/app.ts | unset `a` |",
  "",
  "```ts",
  "const a = 2;",
  "```",
  "",
  "See [the docs](https://example.com/docs) and [this](javascript:alert(1)).",
  "",
  "![diagram](https://example.com/diagram.png)",
  "",
  '<script>alert("x")</script> <img src="x" onerror="alert(1)">',
].join("\n");

const DIFF = "@@ -1,2 +1,2 @@\n-const a = 1;\n+const a = 2;\n const b = a;";

/**
 * A person reads what agents did: tool calls as cards (command line, exit code, duration,
 * output folded when long and read whole on demand, a file change's diff), markdown answers
 * (code blocks with Copy, tables, links; no raw HTML, no remote image without a click), a reply
 * streaming as it is written, the whole tree of agents under a thread (a grandchild and a child
 * on a linked environment too) with a subtree stopped from it, times and costs, the send modes
 * explained and the keyboard shortcuts. Real servers, scripted providers, Debian's Chromium.
 */
describeInChromium("what agents did, in a real browser", () => {
  let a: McpLab;
  let b: McpLab;
  let router: ApiClient;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const UI_WAIT = { timeout: 20_000 };
  const start = async (title: string, prompt: string, extra: Record<string, unknown> = {}) => {
    const created = await ok(
      router.post("/threads", {
        projectId: a.projectId,
        threads: [{ title, prompt, target: { providerInstanceId: "alpha" }, ...extra }],
      }),
      201,
    );
    return created.threads[0].thread.threadId as string;
  };
  const open = async (threadId: string, title: string) => {
    await page.goto(`${a.server.url}/threads/${threadId}`);
    await page.locator("#thread-title").filter({ hasText: title }).waitFor(UI_WAIT);
  };

  beforeAll(async () => {
    // B (127.0.0.3) is linked on A as "mac": a child delegated there is in A's tree.
    [a, b] = await Promise.all([McpLab.start(), McpLab.start({ listen: { host: "127.0.0.3" } })]);
    const issued = b.host.container.resolve(ReachGrants).issue({
      for: "linux",
      projects: "*",
      verbs: ["read", "delegate", "cancel"],
      maxRuntimeMode: "full-access",
      ttlMs: 3_600_000,
    });
    a.host.container.resolve(ReachLinks).add({ name: "mac", url: b.server.url, secret: issued.secret });
    const operator = a.registry.issueClientToken({
      ttlMs: 3_600_000,
      capabilities: ["orchestration:operate"],
      ceiling: { runtimeMode: "full-access", interactionMode: "default" },
    }).token;
    router = new ApiClient(a.server.apiUrl, operator);
    browser = await launchChromium();
    // axe-core is injected, which the CSP would refuse; the app runs under it in the other browser tests.
    context = await browser.newContext({
      viewport: { width: 1280, height: 800 },
      bypassCSP: true,
      permissions: ["clipboard-read", "clipboard-write"],
    });
    page = await context.newPage();
    page.on("pageerror", (error) => console.error("page error:", error));
    const person = a.registry.issueClientToken({
      ttlMs: 3_600_000,
      capabilities: ["orchestration:read", "orchestration:operate", "orchestration:approve"],
      ceiling: { runtimeMode: "full-access", interactionMode: "default" },
    }).token;
    await signInWithToken(page, a.server.url, person);
    await page.locator(".verbs").filter({ hasText: "operate" }).waitFor(UI_WAIT);
  });

  afterAll(async () => {
    await browser?.close();
    await Promise.all([a?.stop(), b?.stop()]);
  });

  let workedId: string;

  it("shows tool calls as cards: the command line, exit code, duration, output folded when long and read whole on demand, a file change's diff", async () => {
    workedId = await start(
      "fix the build",
      `@@shell printf 'line %s\\n' $(seq 1 400) @@shell echo broken; exit 3 @@diff src/app.ts ${DIFF} @@usage in=1000 out=200 cost=0.0123 @@reply ${MARKDOWN_ANSWER}`,
    );
    await ok(router.get(`/threads/${workedId}/wait`));
    await open(workedId, "fix the build");
    await page.getByRole("button", { name: "Activity" }).click();

    const long = page.locator('.tool-card[data-tool-kind="command"]').filter({ hasText: "seq 1 400" });
    await long.waitFor(UI_WAIT);
    expect(await long.locator(".command-line").innerText()).toBe("$ printf 'line %s\\n' $(seq 1 400)");
    expect(await long.locator("[data-exit-code]").innerText()).toBe("exit 0");
    expect(await long.locator("[data-duration]").innerText()).toMatch(/^\d+ ms$|^\d+\.\d s$/);
    expect(await long.locator("[data-tool-status]").innerText()).toBe("completed");
    // Its time, elapsed run and the tree's cost, in the heading.
    expect(await page.locator("[data-tree-usage]").innerText()).toBe("tree: 1,200 tokens · $0.0123");
    expect(await page.locator("[data-run-elapsed]").innerText()).toMatch(/^run 1: \d+s$/);
    const started = page.locator(".thread-meta time.when");
    expect(await started.getAttribute("title")).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    expect(await started.innerText()).toMatch(/^started (just now|\d+s ago)$/);
    expect(await seriousViolations(page)).toEqual([]);
    // The cards, not the prompt that asked for them, at the top of the screenshots.
    await long.evaluate((card) => {
      const timeline = card.closest(".timeline")!;
      timeline.scrollTop += card.getBoundingClientRect().top - timeline.getBoundingClientRect().top - 8;
    });
    await screenshotVariants(page, "thread-activity");
    // Folded: the first lines, and the rest on demand.
    const shown = await long.locator(".tool-output pre").innerText();
    expect(shown.split("\n").filter((line) => line !== "")).toEqual(
      Array.from({ length: 12 }, (_, i) => `line ${i + 1}`),
    );
    await long.getByRole("button", { name: /Show the whole output \([\d,]+ characters\)/ }).click();
    await long.locator(".tool-output pre").filter({ hasText: "line 400" }).waitFor(UI_WAIT);
    const whole = await long.locator(".tool-output pre").innerText();
    expect(whole.trim().split("\n")).toHaveLength(400);

    const failed = page.locator('.tool-card[data-tool-kind="command"]').filter({ hasText: "exit 3" });
    expect(await failed.locator(".exit-code.failed").innerText()).toBe("exit 3");
    expect(await failed.locator("[data-tool-status]").innerText()).toBe("failed");
    expect((await failed.locator(".tool-output pre").innerText()).trim()).toBe("broken");

    const diff = page.locator('.tool-card[data-tool-kind="file_change"]');
    expect(await diff.locator(".tool-title").innerText()).toBe("src/app.ts");
    expect((await diff.locator(".diff-add").innerText()).trim()).toBe("+const a = 2;");
    expect((await diff.locator(".diff-remove").innerText()).trim()).toBe("-const a = 1;");
  });

  it("renders a markdown answer with a copyable code block, a table and safe links; raw HTML stays text and no remote image loads", async () => {
    await page.getByRole("button", { name: "Messages" }).click();
    // The Messages read arrives after the switch, and replaces the Activity view's items (the
    // same reply among them): wait for the tool cards to go, or the reply checked is the one
    // about to be replaced (CI once counted no list items in it).
    await page
      .locator(".tool-card")
      .first()
      .waitFor({ state: "detached", ...UI_WAIT });
    const answer = page.locator(".item-assistant").filter({ hasText: "Findings" });
    await answer.waitFor(UI_WAIT);
    // A message's headings sit below the page's own (h1, h2): ### is an h5.
    expect(await answer.locator("h5").innerText()).toBe("Findings");
    expect(await answer.locator("strong").innerText()).toBe("two");
    expect(await answer.locator("ol > li").count()).toBe(2);
    expect(await answer.locator("table td").allInnerTexts()).toEqual(["src/app.ts", "unset a"]);
    expect(await answer.locator(".code-block .code-lang").innerText()).toBe("ts");
    await answer.getByRole("button", { name: "Copy ts block" }).click();
    await answer
      .locator(".code-block .copy")
      .filter({ hasText: /^Copied/ })
      .waitFor(UI_WAIT);
    expect(
      await page.evaluate(() =>
        (
          globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }
        ).navigator.clipboard.readText(),
      ),
    ).toBe("const a = 2;");
    // Only http(s) links are links, and they open elsewhere without this page as their opener.
    const docs = answer.getByRole("link", { name: "the docs" });
    expect([
      await docs.getAttribute("href"),
      await docs.getAttribute("target"),
      await docs.getAttribute("rel"),
    ]).toEqual(["https://example.com/docs", "_blank", "noopener noreferrer nofollow"]);
    expect(await answer.locator('a[href^="javascript"]').count()).toBe(0);
    expect(await answer.getByText("this", { exact: true }).count()).toBe(1);
    // No image is fetched into the page: it is a link the person may open.
    expect(await answer.locator("img").count()).toBe(0);
    expect(await answer.locator("a.md-image").innerText()).toBe("image: diagram (example.com)");
    // The HTML is shown as what it is, and nothing of it ran.
    expect(await answer.locator("script").count()).toBe(0);
    expect(await answer.innerText()).toContain('<script>alert("x")</script>');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshotVariants(page, "thread-markdown");
  });

  it("streams a reply as it is written, before anything is stored, and replaces it with the message once complete", async () => {
    const threadId = await start(
      "draft the plan",
      "@@say Drafting **the plan**: @@gate stream-hold @@say step one, @@gate stream-more @@reply step two.",
    );
    await open(threadId, "draft the plan");
    await page.evaluate(() => ((globalThis as unknown as PageGlobals).sameLoad = true));
    const streaming = page.locator(".item-assistant[data-streaming]");
    await streaming.locator("strong").filter({ hasText: "the plan" }).waitFor(UI_WAIT);
    expect(await streaming.locator(".writing").innerText()).toBe("writing…");
    // Nothing of it is in the thread yet: it came from the stream alone.
    const stored = await ok(router.get(`/threads/${threadId}`, { view: "messages" }));
    expect(stored.items.map((item: { role: string }) => item.role)).toEqual(["user"]);
    releaseGate(a.t.gateDir, "stream-hold");
    await streaming.filter({ hasText: "Drafting the plan: step one," }).waitFor(UI_WAIT);
    releaseGate(a.t.gateDir, "stream-more");
    await page
      .locator(".item-assistant:not([data-streaming])")
      .filter({ hasText: "Drafting the plan: step one, step two." })
      .waitFor(UI_WAIT);
    expect(await page.locator("[data-streaming]").count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).sameLoad)).toBe(true);
  });

  it("shows a thread's whole tree (a grandchild, a child on a linked environment) with usage at each node, groups Subagents under their parents, and stops a subtree", async () => {
    const lead = await a.liveAgent({ title: "release lead" });
    const grandchildTask = JSON.stringify({
      task: "@@usage in=40 out=10 @@gate grandchild-hold @@reply notes checked",
      title: "check the notes",
      target: { providerInstanceId: "beta" },
      mode: "async",
    });
    const child = await mustCall<{ taskId: string; childThreadId: string }>(lead.client, "delegate_task", {
      task: `@@tool delegate_task ${grandchildTask} @@usage in=100 out=20 @@gate child-hold @@reply docs done`,
      title: "write the docs",
      target: { providerInstanceId: "alpha", model: "alpha-small" },
      mode: "async",
    });
    const remote = await mustCall<{ taskId: string }>(lead.client, "delegate_task", {
      task: "@@gate mac-build @@reply built on the mac",
      title: "build on the mac",
      target: { providerInstanceId: "alpha" },
      environmentId: "mac",
      mode: "async",
    });
    await untilGatesReached(a.t.gateDir, ["child-hold", "grandchild-hold"]);
    await untilGatesReached(b.t.gateDir, ["mac-build"]);
    const grandchildId = a.host.store.select("thread", "json_extract(data, '$.lineage.parentThreadId') = ?", [
      child.childThreadId,
    ])[0]!.id;

    await open(lead.threadId, "release lead");
    const childRow = page.locator(`.agents-panel [data-child-thread-id="${child.childThreadId}"]`);
    const grandRow = page.locator(`.agents-panel [data-child-thread-id="${grandchildId}"]`);
    await childRow.locator(".badge").filter({ hasText: "running" }).waitFor(UI_WAIT);
    await grandRow.locator(".badge").filter({ hasText: "running" }).waitFor(UI_WAIT);
    expect([await childRow.getAttribute("data-depth"), await grandRow.getAttribute("data-depth")]).toEqual(["1", "2"]);
    expect(await grandRow.locator(".agent-facts").innerText()).toContain("beta");
    expect(await childRow.locator(".agent-facts").innerText()).toContain("alpha-small");
    const remoteRow = page.locator(`.agents-panel [data-remote-task-id="${remote.taskId}"]`);
    await remoteRow.locator(".badge").filter({ hasText: "running" }).waitFor(UI_WAIT);
    expect(await remoteRow.locator(".agent-where").innerText()).toBe("on mac");
    // In the sidebar, each child is under its parent.
    await page
      .locator(
        `[data-section="subagents"] [data-parent-group="${lead.threadId}"] a[data-thread-id="${child.childThreadId}"]`,
      )
      .waitFor(UI_WAIT);
    await page
      .locator(
        `[data-section="subagents"] [data-parent-group="${child.childThreadId}"] a[data-thread-id="${grandchildId}"]`,
      )
      .waitFor(UI_WAIT);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshotVariants(page, "agents-tree");

    // Stop the child's subtree: the child and its grandchild stop, the lead and the mac child go on.
    await childRow.getByRole("button", { name: "Stop write the docs and the 1 agents under it" }).click();
    await page.locator("[data-tree-outcome]").filter({ hasText: 'Stopped "write the docs"' }).waitFor(UI_WAIT);
    await grandRow
      .locator(".badge")
      .filter({ hasText: /cancelled|interrupted/ })
      .waitFor(UI_WAIT);
    await childRow
      .locator(".badge")
      .filter({ hasText: /cancelled|interrupted/ })
      .waitFor(UI_WAIT);
    const statuses = (threadId: string) =>
      a.host.store.select("run", "thread_id = ?", [threadId]).map((run) => run.status);
    expect(statuses(child.childThreadId).every((status) => status === "cancelled" || status === "interrupted")).toBe(
      true,
    );
    expect(statuses(grandchildId).every((status) => status === "cancelled" || status === "interrupted")).toBe(true);
    expect(statuses(lead.threadId)).toEqual(["running"]);
    expect(await remoteRow.locator(".badge").innerText()).toBe("running");
    // What the stopped turns had used is on their rows: tokens, and no price for the scripted models.
    await grandRow.locator("[data-usage]").filter({ hasText: "50 tokens · unpriced" }).waitFor(UI_WAIT);
    await childRow
      .locator("[data-usage]")
      .filter({ hasText: /^\d[\d,]* tokens · unpriced/ })
      .waitFor(UI_WAIT);

    releaseGate(b.t.gateDir, "mac-build");
    await remoteRow.locator(".badge").filter({ hasText: "completed" }).waitFor(UI_WAIT);
    lead.release();
  });

  it("explains the send modes, says what the policy did, and answers to the keyboard: ? lists the shortcuts, / filters, n starts a thread, Ctrl+. stops", async () => {
    const threadId = await start("keyboard thread", "@@reply ready");
    await ok(router.get(`/threads/${threadId}/wait`));
    await open(threadId, "keyboard thread");
    await page.getByLabel("Queue").check();
    expect(await page.locator("[data-mode-explains]").innerText()).toBe(
      "Runs after the work under way ends: the running turn is left alone.",
    );
    await page.getByLabel("Auto").check();
    await page.locator("#composer-text").fill("@@gate keys-hold @@reply stopped?");
    await page.locator("#composer-text").press("Control+Enter");
    await page
      .locator("[data-outcome]")
      .filter({ hasText: /^started$/ })
      .waitFor(UI_WAIT);
    expect(await page.locator("[data-decision]").innerText()).toBe(
      "You asked auto: The thread is idle, so the message starts a run.",
    );
    await untilGatesReached(a.t.gateDir, ["keys-hold"]);
    await page.locator("[data-thread-status]").filter({ hasText: "running" }).waitFor(UI_WAIT);
    // Ctrl+. works from the composer itself.
    await page.locator("#composer-text").press("Control+.");
    await page.locator(".outcome").filter({ hasText: "Stopped" }).waitFor(UI_WAIT);
    await page.locator("[data-thread-status]").filter({ hasText: "interrupted" }).waitFor(UI_WAIT);

    await page.locator("#thread-title").click();
    await page.keyboard.press("?");
    const help = page.getByRole("dialog", { name: "Keyboard shortcuts" });
    await help.waitFor(UI_WAIT);
    expect(await help.locator("tr").count()).toBe(6);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshotVariants(page, "keyboard-shortcuts");
    await page.keyboard.press("Escape");
    await help.waitFor({ state: "hidden", ...UI_WAIT });

    await page.keyboard.press("/");
    await page.waitForFunction(
      () =>
        (globalThis as unknown as { document: { activeElement: { id: string } | null } }).document.activeElement?.id ===
        "thread-filter",
      undefined,
      UI_WAIT,
    );
    await page.keyboard.type("keyboard");
    await page.locator(`.main-list a[data-thread-id="${threadId}"]`).waitFor(UI_WAIT);
    expect(await page.locator(`.main-list a[data-thread-id="${workedId}"]`).count()).toBe(0);
    await page.locator("#thread-filter").fill("");
    // The sidebar can follow recent activity: the thread just stopped comes first.
    await page.getByLabel("Order threads by").selectOption("activity");
    expect(await page.locator(".main-list a[data-thread-id]").first().getAttribute("data-thread-id")).toBe(threadId);

    await page.locator("#thread-title").click();
    await page.keyboard.press("n");
    await page.waitForURL(`${a.server.url}/new`, UI_WAIT);
    await page.getByRole("button", { name: "Start thread" }).waitFor(UI_WAIT);
    await screenshotVariants(page, "new-thread");
  });

  it("shows the other screens at both widths, light and dark: the inbox, providers, sign-in", async () => {
    await page.getByRole("link", { name: "Providers" }).click();
    await page.locator("table th[scope=row]").filter({ hasText: "alpha" }).waitFor(UI_WAIT);
    await screenshotVariants(page, "providers");
    await page.getByRole("link", { name: /Needs a person/ }).click();
    await page.locator("#inbox-title").waitFor(UI_WAIT);
    await screenshotVariants(page, "inbox");
    const stranger = await browser.newContext({ viewport: { width: 1280, height: 800 }, bypassCSP: true });
    const signIn = await stranger.newPage();
    await signIn.goto(a.server.url);
    await signIn.locator("#token").waitFor(UI_WAIT);
    expect(await seriousViolations(signIn)).toEqual([]);
    await screenshotVariants(signIn, "sign-in");
    await stranger.close();
  });
});
