import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ApiClient, ok } from "../../../core/test/support/api-client.js";
import { runCli } from "../../../core/test/support/cli.js";
import { McpLab } from "../../../core/test/support/mcp-lab.js";
import { readRows } from "../../../core/test/support/serve-process.js";
import {
  type PageGlobals,
  screenshot,
  SCREENSHOTS,
  seriousViolations,
  startOtherOrigin,
  describeInChromium,
  launchChromium,
} from "./browser-support.js";

describeInChromium("the web UI in a real browser", () => {
  let lab: McpLab;
  let router: ApiClient;
  let browser: Browser;
  let person: BrowserContext;
  let page: Page;
  let readerToken: string;
  const UI_WAIT = { timeout: 20_000 };

  beforeAll(async () => {
    lab = await McpLab.start();
    const issue = (capabilities: ("orchestration:read" | "orchestration:operate" | "orchestration:approve")[]) =>
      lab.registry.issueClientToken({
        ttlMs: 3_600_000,
        capabilities,
        ceiling: { runtimeMode: "approval-required", interactionMode: "default" },
      }).token;
    // The router: a program that creates the planner and its children through the API.
    router = new ApiClient(lab.server.apiUrl, issue(["orchestration:operate"]));
    readerToken = issue(["orchestration:read"]);
    browser = await launchChromium();
    // axe-core is injected into this context's pages, which the app's CSP would refuse; the
    // reader's context below keeps the CSP, so the app is proven to run under it too.
    person = await browser.newContext({ viewport: { width: 1400, height: 860 }, bypassCSP: true });
    page = await person.newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await lab?.stop();
  });

  const sidebarRow = (threadId: string, where: string) => page.locator(`${where} a[data-thread-id="${threadId}"]`);

  it("signs in with the one-time link `switchyard ui` prints; the link works once and the database holds only hashes", async () => {
    const cli = await runCli(["ui", "--home", lab.t.home, "--url", lab.server.url, "--json"]);
    expect(cli.code, cli.stderr).toBe(0);
    const { link, tokenId } = JSON.parse(cli.stdout) as { link: string; tokenId: string };
    expect(link).toMatch(new RegExp(`^${lab.server.url}/#code=sy_uc_`));
    await page.goto(link);
    await page.locator(".verbs").filter({ hasText: "read · operate · approve · install" }).waitFor(UI_WAIT);
    // The code left the address bar at once.
    expect(page.url()).toBe(`${lab.server.url}/`);
    const cookies = await person.cookies(lab.server.url);
    expect(cookies.map((cookie) => [cookie.name, cookie.httpOnly, cookie.sameSite])).toEqual([
      [`switchyard_session_${lab.registry.environmentId}`, true, "Strict"],
    ]);
    // The page secret is in this origin's storage, never in a cookie.
    const pageSecret = await page.evaluate(() =>
      (globalThis as unknown as { localStorage: { getItem(key: string): string | null } }).localStorage.getItem(
        "switchyard.pageSecret",
      ),
    );
    expect(pageSecret).toMatch(/^sy_up_/);
    // Neither the code nor the session secret is stored, only their hashes.
    const code = decodeURIComponent(new URL(link).hash.slice("#code=".length));
    const rows = readRows<{ secret_hash: string; kind: string; credential_id: string }>(
      lab.t.home,
      "SELECT secret_hash, kind, credential_id FROM web_sessions",
    );
    expect(rows.map((row) => row.kind).sort()).toEqual(["code", "session"]);
    expect(rows.every((row) => row.credential_id === tokenId && /^[0-9a-f]{64}$/.test(row.secret_hash))).toBe(true);
    expect(JSON.stringify(rows)).not.toContain(code);
    expect(JSON.stringify(rows)).not.toContain(cookies[0]!.value);
    expect(JSON.stringify(rows)).not.toContain(pageSecret);

    // A second use of the same link is refused, with a message that says what to do.
    const other = await browser.newContext();
    const second = await other.newPage();
    await second.goto(link);
    await second.getByRole("alert").filter({ hasText: "already used" }).waitFor(UI_WAIT);
    await other.close();
  });

  /** The planner delegates one task itself, besides the router's two children. */
  const REVIEW = {
    task: "@@reply reviewed",
    title: "reviewer",
    target: { providerInstanceId: "beta" },
    mode: "async",
  };
  let plannerId: string;
  let docsChildId: string;
  let cleanerChildId: string;

  it("shows a new planner live, then its two children appear in its Agents panel and in Subagents, not in the main list", async () => {
    // Marks this page load: a reload would lose it.
    await page.evaluate(() => ((globalThis as unknown as PageGlobals).sameLoad = true));
    const created = await ok(
      router.post("/threads", {
        projectId: lab.projectId,
        threads: [
          {
            title: "planner",
            prompt: `@@subagent spellchecker @@tool delegate_task ${JSON.stringify(REVIEW)} @@gate planner-hold @@reply plan done`,
            target: { providerInstanceId: "alpha" },
          },
        ],
      }),
      201,
    );
    plannerId = created.threads[0].thread.threadId;
    await sidebarRow(plannerId, ".main-list").click(UI_WAIT);
    await page.locator("#thread-title").filter({ hasText: "planner" }).waitFor(UI_WAIT);
    // The provider's own sub-agent (no thread) is a plain row, not a link.
    await page.locator(".agents-panel [data-native-subagent]").filter({ hasText: "spellchecker" }).waitFor(UI_WAIT);
    expect(await page.locator(".agents-panel [data-native-subagent] a").count()).toBe(0);
    // The task it delegated is a row too, and finishes live with its result.
    const reviewer = page.locator(".agents-panel [data-child-thread-id]").filter({ hasText: "reviewer" });
    await reviewer.locator(".agent-facts").filter({ hasText: "delegated task" }).waitFor(UI_WAIT);
    await reviewer.locator(".badge").filter({ hasText: "completed" }).waitFor(UI_WAIT);
    await reviewer.locator(".last-reply").filter({ hasText: "reviewed" }).waitFor(UI_WAIT);
    expect(await reviewer.locator(".agent-facts").innerText()).toContain("beta");

    const children = await ok(
      router.post("/threads", {
        projectId: lab.projectId,
        threads: [
          {
            title: "docs child",
            prompt: "@@gate docs-hold @@reply docs checked",
            target: { providerInstanceId: "alpha" },
            parentThreadId: plannerId,
          },
          {
            title: "cleaner child",
            prompt: "clean the build @@approve rm -rf build",
            target: { providerInstanceId: "alpha" },
            parentThreadId: plannerId,
          },
        ],
      }),
      201,
    );
    docsChildId = children.threads[0].thread.threadId;
    cleanerChildId = children.threads[1].thread.threadId;
    for (const childId of [docsChildId, cleanerChildId])
      await page.locator(`.agents-panel [data-child-thread-id="${childId}"]`).waitFor(UI_WAIT);
    await page
      .locator(`.agents-panel [data-child-thread-id="${docsChildId}"] .badge`)
      .filter({ hasText: "running" })
      .waitFor(UI_WAIT);
    await page
      .locator(`.agents-panel [data-child-thread-id="${cleanerChildId}"] .badge`)
      .filter({ hasText: "needs attention" })
      .waitFor(UI_WAIT);
    // The children's own subagent items in the planner's timeline are not shown twice.
    expect(await page.locator(".agents-panel [data-native-subagent]").count()).toBe(1);
    const facts = await page.locator(`.agents-panel [data-child-thread-id="${docsChildId}"] .agent-facts`).innerText();
    expect(facts).toContain("alpha");
    expect(facts).toContain("router child");

    // Children left the main list for the Subagents section.
    await sidebarRow(docsChildId, '[data-section="subagents"]').waitFor(UI_WAIT);
    await sidebarRow(cleanerChildId, '[data-section="subagents"]').waitFor(UI_WAIT);
    expect(await sidebarRow(docsChildId, ".main-list").count()).toBe(0);
    expect(await sidebarRow(cleanerChildId, ".main-list").count()).toBe(0);
    expect(await sidebarRow(plannerId, ".main-list").count()).toBe(1);
    // The inbox counts the cleaner's approval.
    await page.locator(".nav-link .count.attention").filter({ hasText: "1" }).waitFor(UI_WAIT);
    await screenshot(page, "thread-with-agents-panel");
    expect(await seriousViolations(page)).toEqual([]);
  });

  it("folds a section from the keyboard and remembers it across a reload", async () => {
    await page.locator('[data-section="subagents"] .section-toggle').focus();
    await page.keyboard.press("Enter");
    expect(await page.locator('[data-section="subagents"] .section-toggle').getAttribute("aria-expanded")).toBe(
      "false",
    );
    expect(await sidebarRow(docsChildId, '[data-section="subagents"]').count()).toBe(0);
    const reloaded = await person.newPage();
    await reloaded.goto(`${lab.server.url}/threads/${plannerId}`);
    await reloaded.locator('[data-section="subagents"] .section-toggle[aria-expanded="false"]').waitFor(UI_WAIT);
    await reloaded.close();
    await page.locator('[data-section="subagents"] .section-toggle').click();
    await sidebarRow(docsChildId, '[data-section="subagents"]').waitFor(UI_WAIT);
  });

  it("opens a child from its row, steers it, sees it finish live, and goes back by the breadcrumb", async () => {
    await page.locator(`.agents-panel [data-child-thread-id="${docsChildId}"] a`).click();
    await page.locator("#thread-title").filter({ hasText: "docs child" }).waitFor(UI_WAIT);
    expect(new URL(page.url()).pathname).toBe(`/threads/${docsChildId}`);
    await page.locator(`.breadcrumb a[data-parent-thread-id="${plannerId}"]`).waitFor(UI_WAIT);

    await lab.waitForLiveTurn(docsChildId);
    await page.locator("#composer-text").fill("also check the changelog");
    await page.getByLabel("Steer").check();
    await page.getByRole("button", { name: "Send" }).click();
    await page
      .locator("[data-outcome]")
      .filter({ hasText: /^steered$/ })
      .waitFor(UI_WAIT);
    await screenshot(page, "child-steered-with-breadcrumb");

    lab.release("docs-hold");
    await page
      .locator(".item-assistant")
      .filter({ hasText: "docs checked [steered: also check the changelog]" })
      .waitFor(UI_WAIT);
    await page.locator("[data-thread-status]").filter({ hasText: "completed" }).waitFor(UI_WAIT);

    await page.locator(`.breadcrumb a[data-parent-thread-id="${plannerId}"]`).click();
    await page.locator("#thread-title").filter({ hasText: "planner" }).waitFor(UI_WAIT);
    const docsRow = page.locator(`.agents-panel [data-child-thread-id="${docsChildId}"]`);
    await docsRow.locator(".badge").filter({ hasText: "completed" }).waitFor(UI_WAIT);
    await docsRow.locator(".last-reply").filter({ hasText: "docs checked" }).waitFor(UI_WAIT);
  });

  it("a read-only session sees the approval but cannot answer it, in the UI or by calling the API itself", async () => {
    const reader = await browser.newContext({ viewport: { width: 1200, height: 800 } });
    const violations: string[] = [];
    const readerPage = await reader.newPage();
    readerPage.on("console", (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    await readerPage.goto(lab.server.url);
    await readerPage.locator("#token").waitFor(UI_WAIT);
    await screenshot(readerPage, "sign-in");
    await readerPage.locator("#token").fill(readerToken);
    await readerPage.getByRole("button", { name: "Sign in" }).click();
    await readerPage.locator(".verbs").filter({ hasText: "read" }).waitFor(UI_WAIT);
    await readerPage.getByRole("link", { name: /Needs a person/ }).click();
    const card = readerPage.locator(".request").filter({ hasText: "rm -rf build" });
    await card.waitFor(UI_WAIT);
    expect(await card.getByRole("button", { name: "Approve" }).count()).toBe(0);
    await card.getByRole("note").filter({ hasText: "needs the approve verb" }).waitFor(UI_WAIT);
    // The server refuses it too: the UI hiding a button is not the defence.
    const requestId = await card.getAttribute("data-request-id");
    const answer = await readerPage.evaluate(
      async ({ threadId, requestId }) => {
        const pageSecret = (
          globalThis as unknown as { localStorage: { getItem(key: string): string } }
        ).localStorage.getItem("switchyard.pageSecret");
        const response = await fetch(`/api/v1/threads/${threadId}/pending-requests/${requestId}/respond`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-switchyard-page-secret": pageSecret },
          body: JSON.stringify({ decision: "accept" }),
        });
        return {
          status: response.status,
          body: (await response.json()) as { error: { code: string; details: { required?: string } } },
        };
      },
      { threadId: cleanerChildId, requestId: requestId! },
    );
    expect([answer.status, answer.body.error.code, answer.body.error.details.required]).toEqual([
      403,
      "capability_denied",
      "orchestration:approve",
    ]);
    // Its composer says why it cannot send.
    await card.getByRole("link").click();
    await readerPage.locator("#composer-text[disabled]").waitFor(UI_WAIT);
    expect(await readerPage.locator("#composer-text").getAttribute("placeholder")).toContain("needs the operate verb");
    expect(violations).toEqual([]);
    await reader.close();
  });

  it("refuses a cross-origin POST that carries the session cookie, and a same-page POST without the page secret", async () => {
    const target = `${lab.server.url}/api/v1/threads/${docsChildId}/messages`;
    const before = (await ok(router.get(`/threads/${docsChildId}`, { limit: 200 }))).items.length;
    // Another loopback port is the same site: SameSite=Strict still sends the cookie, so the
    // server's Origin check and CSRF header are what refuse it.
    const attacker = await startOtherOrigin(`<!doctype html><title>other</title>
        <form id="f" method="post" action="${target}" enctype="text/plain"><input name='{"message":"forged","x":"' value='"}'></form>
        <script>
          fetch(${JSON.stringify(target)}, { method: "POST", mode: "no-cors", credentials: "include", headers: { "content-type": "text/plain" }, body: JSON.stringify({ message: "forged by fetch" }) })
            .finally(() => document.getElementById("f").submit());
        </script>`);
    try {
      const attackPage = await person.newPage();
      const fetched = attackPage.waitForResponse(
        (response) => response.url() === target && response.request().resourceType() === "fetch",
      );
      const posted = attackPage.waitForResponse(
        (response) => response.url() === target && response.request().resourceType() === "document",
      );
      await attackPage.goto(attacker.url);
      expect((await fetched).status()).toBe(403);
      const form = await posted;
      expect(form.status()).toBe(403);
      expect((await form.json()) as unknown).toMatchObject({ error: { code: "cross_origin_refused" } });
      // The cookie was sent (same site): it was the server that refused.
      expect((await form.request().allHeaders()).cookie).toContain(`switchyard_session_${lab.registry.environmentId}=`);
      await attackPage.close();
    } finally {
      await attacker.close();
    }
    const withoutHeader = await page.evaluate(async (url) => {
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ message: "no header" }),
      });
      return { status: response.status, code: ((await response.json()) as { error: { code: string } }).error.code };
    }, target);
    expect(withoutHeader).toEqual({ status: 401, code: "invalid_token" });
    expect((await ok(router.get(`/threads/${docsChildId}`, { limit: 200 }))).items.length).toBe(before);
  });

  it("answers the approval from the attention inbox, and the child proceeds and finishes live", async () => {
    await page.getByRole("link", { name: /Needs a person/ }).click();
    const card = page.locator(".request").filter({ hasText: "rm -rf build" });
    await card.waitFor(UI_WAIT);
    await screenshot(page, "attention-inbox");
    expect(await seriousViolations(page)).toEqual([]);
    await card.getByRole("button", { name: "Approve" }).click();
    await page.locator(".inbox .empty").waitFor(UI_WAIT);
    await sidebarRow(plannerId, ".main-list").click();
    const cleanerRow = page.locator(`.agents-panel [data-child-thread-id="${cleanerChildId}"]`);
    await cleanerRow.locator(".badge").filter({ hasText: "completed" }).waitFor(UI_WAIT);
    await cleanerRow.locator(".last-reply").filter({ hasText: "approved: rm -rf build" }).waitFor(UI_WAIT);

    lab.release("planner-hold");
    await page.locator("[data-thread-status]").filter({ hasText: "completed" }).waitFor(UI_WAIT);
    // All of it arrived by the event stream, in the page loaded at the start.
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).sameLoad)).toBe(true);
    await screenshot(page, "planner-finished");

    // Its work done, the person settles it: it leaves the main list for Settled.
    await page.locator('[data-section="settled"] .section-toggle[aria-expanded="false"]').click();
    await page.getByRole("button", { name: "Settle", exact: true }).click();
    await sidebarRow(plannerId, '[data-section="settled"]').waitFor(UI_WAIT);
    expect(await sidebarRow(plannerId, ".main-list").count()).toBe(0);
    await page.getByRole("button", { name: "Revive", exact: true }).click();
    await sidebarRow(plannerId, ".main-list").waitFor(UI_WAIT);
  });

  it("filters the sidebar by status and provider, in every section, and clears the filters", async () => {
    const created = await ok(
      router.post("/threads", {
        projectId: lab.projectId,
        threads: [
          {
            title: "filter probe",
            prompt: "@@gate filter-hold @@reply probe done",
            target: { providerInstanceId: "beta" },
          },
        ],
      }),
      201,
    );
    const probeId = created.threads[0].thread.threadId as string;
    const probeRow = sidebarRow(probeId, ".main-list");
    await probeRow.locator(".badge").filter({ hasText: "running" }).waitFor(UI_WAIT);
    const subagents = page.locator('[data-section="subagents"]');
    const reviewerRow = subagents.locator("a[data-thread-id]").filter({ hasText: "reviewer" });
    await reviewerRow.waitFor(UI_WAIT);

    // One provider: the planner (alpha) leaves, the reviewer it delegated to beta stays in Subagents.
    await page.getByLabel("Show threads on provider").selectOption("beta");
    await sidebarRow(plannerId, ".main-list").waitFor({ state: "detached", ...UI_WAIT });
    expect(await probeRow.count()).toBe(1);
    expect(await reviewerRow.count()).toBe(1);
    expect(await subagents.locator(`a[data-thread-id="${docsChildId}"]`).count()).toBe(0);
    // And one status: the completed reviewer leaves too.
    await page.getByLabel("Show threads with status").selectOption({ label: "Running" });
    await reviewerRow.waitFor({ state: "detached", ...UI_WAIT });
    expect(await probeRow.count()).toBe(1);
    await screenshot(page, "sidebar-filters");
    expect(await seriousViolations(page)).toEqual([]);

    // Nothing running on alpha: the list says the filters hide everything.
    await page.getByLabel("Show threads on provider").selectOption("alpha");
    await page.locator(".main-list .empty").filter({ hasText: "No thread matches the filters" }).waitFor(UI_WAIT);

    // The probe finishing moves it out of a Running filter live.
    await page.getByLabel("Show threads on provider").selectOption("beta");
    await probeRow.waitFor(UI_WAIT);
    lab.release("filter-hold");
    await probeRow.waitFor({ state: "detached", ...UI_WAIT });

    await page.getByRole("button", { name: "Clear", exact: true }).click();
    await sidebarRow(plannerId, ".main-list").waitFor(UI_WAIT);
    await probeRow.locator(".badge").filter({ hasText: "completed" }).waitFor(UI_WAIT);
    expect(await page.getByLabel("Show threads with status").inputValue()).toBe("any");
  });

  it("opens a thread with 5,000 items at its newest and loads older ones on scroll, never all of them", async () => {
    const created = await ok(
      router.post("/threads", {
        projectId: lab.projectId,
        threads: [{ title: "long history", prompt: "@@reply item zero", target: { providerInstanceId: "alpha" } }],
      }),
      201,
    );
    const threadId: string = created.threads[0].thread.threadId;
    expect(await ok(router.get(`/threads/${threadId}/wait`))).toMatchObject({ status: "completed" });
    // A long past, written through the store's own append path: 5,000 more replies.
    const template = lab.host.store
      .select("item", "thread_id = ?", [threadId])
      .find((item) => item.kind === "assistant_message")!;
    const last = Math.max(...lab.host.store.select("item", "thread_id = ?", [threadId]).map((item) => item.position));
    const now = new Date().toISOString();
    lab.host.store.transaction(() =>
      lab.host.store.append(
        null,
        Array.from({ length: 5_000 }, (_, i) => ({
          entity: "item" as const,
          record: {
            ...template,
            id: `${template.id}:history:${i}`,
            position: last + 1 + i,
            text: `history reply ${i + 1}`,
            createdAt: now,
            updatedAt: now,
          },
        })),
        now,
      ),
    );
    await page.goto(`${lab.server.url}/threads/${threadId}`);
    await page
      .locator(".item-assistant .item-text")
      .filter({ hasText: /^history reply 5000$/ })
      .waitFor(UI_WAIT);
    const firstPage = await page.locator(".items > li").count();
    expect(firstPage).toBeGreaterThan(0);
    expect(firstPage).toBeLessThanOrEqual(50);
    // It opens at the bottom, where the newest reply is.
    expect(
      await page
        .locator(".timeline")
        .evaluate((element) => element.scrollTop + element.clientHeight >= element.scrollHeight - 2),
    ).toBe(true);
    // Scrolling up loads the page before, and keeps going as the person scrolls.
    for (let pages = 2; pages <= 3; pages++) {
      await page.locator(".timeline").evaluate((element) => element.scrollTo({ top: 0 }));
      await page.waitForFunction(
        (count) => (globalThis as unknown as PageGlobals).document.querySelectorAll(".items > li").length >= count,
        firstPage * pages - 1,
        UI_WAIT,
      );
    }
    const shown = await page.locator(".items > li").count();
    expect(shown).toBeLessThanOrEqual(200);
    expect(await page.locator(".items > li").first().innerText()).toMatch(/history reply \d+/);
    await screenshot(page, "long-thread");
    // Further up, the page keeps a window: past 300 items it lets go of the newest, and reads them again on the way down.
    const itemCount = () => page.locator(".items > li").count();
    for (let pages = 0; pages < 12 && (await page.locator(".load-newer").count()) === 0; pages++) {
      const before = await page.locator(".items > li").first().getAttribute("data-position");
      await page.locator(".timeline").evaluate((element) => element.scrollTo({ top: 0 }));
      await page.waitForFunction(
        (position) =>
          (
            globalThis as unknown as {
              document: { querySelector(s: string): { getAttribute(n: string): string } | null };
            }
          ).document
            .querySelector(".items > li")
            ?.getAttribute("data-position") !== position,
        before,
        UI_WAIT,
      );
    }
    await page.locator(".load-newer").waitFor(UI_WAIT);
    expect(await itemCount()).toBeLessThanOrEqual(300);
    expect(
      await page
        .locator(".item-assistant .item-text")
        .filter({ hasText: /^history reply 5000$/ })
        .count(),
    ).toBe(0);
    for (
      let pages = 0;
      pages < 20 &&
      (await page
        .locator(".item-assistant .item-text")
        .filter({ hasText: /^history reply 5000$/ })
        .count()) === 0;
      pages++
    ) {
      const last = await page.locator(".items > li").last().getAttribute("data-position");
      await page.locator(".timeline").evaluate((element) => element.scrollTo({ top: element.scrollHeight }));
      await page.waitForFunction(
        (position) => {
          const rows = (
            globalThis as unknown as {
              document: {
                querySelectorAll(s: string): { length: number; [i: number]: { getAttribute(n: string): string } };
              };
            }
          ).document.querySelectorAll(".items > li");
          return rows[rows.length - 1]?.getAttribute("data-position") !== position;
        },
        last,
        UI_WAIT,
      );
      expect(await itemCount()).toBeLessThanOrEqual(300);
    }
    await page
      .locator(".item-assistant .item-text")
      .filter({ hasText: /^history reply 5000$/ })
      .waitFor(UI_WAIT);
    expect(await page.locator(".load-newer").count()).toBe(0);
  });

  it("reconnects after the stream drops, with Last-Event-ID, and misses nothing that happened meanwhile", async () => {
    const createDuringDrop = async (title: string) => {
      lab.server.eventStreams.closeAll();
      await page.locator(".stream-reconnecting").waitFor(UI_WAIT);
      // Created while the page has no stream.
      const created = await ok(
        router.post("/threads", {
          projectId: lab.projectId,
          threads: [{ title, target: { providerInstanceId: "alpha" } }],
        }),
        201,
      );
      return created.threads[0].thread.threadId as string;
    };
    // A page that has seen no event yet has no id to resume from: it reads the lists again once back.
    await page.goto(`${lab.server.url}/`);
    await page.locator(".stream-live").waitFor(UI_WAIT);
    const first = await createDuringDrop("made during the first drop");
    await sidebarRow(first, ".main-list").waitFor(UI_WAIT);
    await page.locator(".stream-live").waitFor(UI_WAIT);

    // One that has seen events resumes from the last one.
    const seen = await ok(
      router.post("/threads", {
        projectId: lab.projectId,
        threads: [{ title: "seen live", target: { providerInstanceId: "alpha" } }],
      }),
      201,
    );
    await sidebarRow(seen.threads[0].thread.threadId, ".main-list").waitFor(UI_WAIT);
    const resumed = page.waitForRequest((request) => new URL(request.url()).pathname === "/api/v1/events", UI_WAIT);
    const second = await createDuringDrop("made during the second drop");
    expect(Number((await (await resumed).allHeaders())["last-event-id"])).toBeGreaterThan(0);
    await sidebarRow(second, ".main-list").waitFor(UI_WAIT);
  });

  it("renames a thread from its heading; the sidebar follows, and a rename made elsewhere arrives live from the stream", async () => {
    const created = await ok(
      router.post("/threads", {
        projectId: lab.projectId,
        threads: [{ title: "draft name", target: { providerInstanceId: "alpha" } }],
      }),
      201,
    );
    const threadId = created.threads[0].thread.threadId as string;
    await page.evaluate(() => ((globalThis as unknown as PageGlobals).sameLoad = true));
    await sidebarRow(threadId, ".main-list").click(UI_WAIT);
    await page.locator("#thread-title").filter({ hasText: "draft name" }).waitFor(UI_WAIT);

    // Escape puts the heading back and changes nothing.
    await page.getByRole("button", { name: "Rename" }).click();
    const field = page.getByLabel("Thread title");
    expect(await field.inputValue()).toBe("draft name");
    expect(await seriousViolations(page)).toEqual([]);
    await field.press("Escape");
    await page.locator("#rename-title").waitFor({ state: "detached", ...UI_WAIT });
    expect(lab.host.store.get("thread", threadId)!.title).toBe("draft name");

    // An empty title is refused in the form; a real one is saved with Enter.
    await page.getByRole("button", { name: "Rename" }).click();
    await field.fill("   ");
    await field.press("Enter");
    await page.getByRole("alert").filter({ hasText: "cannot be empty" }).waitFor(UI_WAIT);
    await field.fill("Release notes for 2.0");
    await screenshot(page, "thread-rename");
    await field.press("Enter");
    await page.locator("#rename-title").waitFor({ state: "detached", ...UI_WAIT });
    await page.locator("#thread-title").filter({ hasText: "Release notes for 2.0" }).waitFor(UI_WAIT);
    await sidebarRow(threadId, ".main-list").filter({ hasText: "Release notes for 2.0" }).waitFor(UI_WAIT);
    expect(lab.host.store.get("thread", threadId)).toMatchObject({
      title: "Release notes for 2.0",
      titleSource: "user",
    });

    // Renamed by someone else: the thread.renamed event carries the title, so the page re-reads nothing.
    const reads: string[] = [];
    const onRequest = (request: { url(): string }) => {
      if (request.url().includes(`/api/v1/threads/${threadId}`)) reads.push(request.url());
    };
    page.on("request", onRequest);
    await ok(router.post(`/threads/${threadId}/update`, { action: "rename", title: "Renamed by the router" }));
    await sidebarRow(threadId, ".main-list").filter({ hasText: "Renamed by the router" }).waitFor(UI_WAIT);
    await page.locator("#thread-title").filter({ hasText: "Renamed by the router" }).waitFor(UI_WAIT);
    page.off("request", onRequest);
    expect(reads).toEqual([]);
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).sameLoad)).toBe(true);
  });

  it("forks a thread from its page: the fork opens in the main list, says how it was made, and continues the conversation", async () => {
    const finished = async (title: string, instance: string, reply: string) => {
      const created = await ok(
        router.post("/threads", {
          projectId: lab.projectId,
          threads: [{ title, prompt: `@@reply ${reply}`, target: { providerInstanceId: instance } }],
        }),
        201,
      );
      const threadId = created.threads[0].thread.threadId as string;
      await ok(router.get(`/threads/${threadId}/wait`));
      return threadId;
    };
    const forkFrom = async (sourceId: string, title: string) => {
      await sidebarRow(sourceId, ".main-list").click(UI_WAIT);
      await page.locator("#thread-title").filter({ hasText: title }).waitFor(UI_WAIT);
      await page.locator(".item-assistant").first().waitFor(UI_WAIT);
      await page.getByRole("button", { name: "Fork" }).click();
      await page
        .locator("#thread-title")
        .filter({ hasText: `${title} (fork)` })
        .waitFor(UI_WAIT);
      const forkId = decodeURIComponent(new URL(page.url()).pathname.slice("/threads/".length));
      expect(forkId).not.toBe(sourceId);
      return forkId;
    };

    // alpha copies conversations itself: a native fork.
    const design = await finished("design review", "alpha", "the plan is A");
    const forkId = await forkFrom(design, "design review");
    expect(lab.host.store.get("thread", forkId)).toMatchObject({
      lineage: { relationship: "fork", parentThreadId: design },
    });
    await page.locator(".outcome").filter({ hasText: "the provider copied the conversation" }).waitFor(UI_WAIT);
    // A fork is a conversation of its own: in the main list, not a child in its source's panel, no breadcrumb.
    await sidebarRow(forkId, ".main-list").waitFor(UI_WAIT);
    expect(await sidebarRow(forkId, '[data-section="subagents"]').count()).toBe(0);
    expect(await page.locator(".breadcrumb").count()).toBe(0);
    await page.locator(`[data-fork-source-id="${design}"]`).filter({ hasText: "design review" }).waitFor(UI_WAIT);
    await screenshot(page, "thread-forked");
    expect(await seriousViolations(page)).toEqual([]);
    await page.locator("#composer-text").fill("@@history");
    await page.getByRole("button", { name: "Send" }).click();
    await page.locator(".item-assistant").filter({ hasText: "the plan is A" }).waitFor(UI_WAIT);
    await page.locator(`[data-fork-source-id="${design}"]`).click();
    await page
      .locator("#thread-title")
      .filter({ hasText: /^design review$/ })
      .waitFor(UI_WAIT);
    expect(await page.locator(`.agents-panel [data-child-thread-id="${forkId}"]`).count()).toBe(0);

    // beta cannot: the conversation goes as portable context with the fork's first message.
    const notes = await finished("beta notes", "beta", "remember the blue door");
    const portableId = await forkFrom(notes, "beta notes");
    await page.locator(".outcome").filter({ hasText: "goes with its first message as context" }).waitFor(UI_WAIT);
    await page.locator("#composer-text").fill("@@reply carried on");
    await page.getByRole("button", { name: "Send" }).click();
    await page.locator(".item-assistant").filter({ hasText: "carried on" }).waitFor(UI_WAIT);
    const transfer = lab.host.store.select("contextTransfer", "target_thread_id = ?", [portableId])[0]!;
    expect(transfer).toMatchObject({ strategy: "portable", status: "consumed" });
    expect(transfer.content).toContain("remember the blue door");
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).sameLoad)).toBe(true);
  });

  it("interrupts a full-access thread from a session whose ceiling is approval-required, and shows a refusal as an error", async () => {
    const { thread } = await lab.host.threads.createThread({
      projectId: lab.projectId,
      providerInstanceId: "alpha",
      runtimeMode: "full-access",
      title: "broad worker",
      prompt: "@@gate broad-hold @@reply never",
      createdBy: "user",
      creationSource: "cli",
    });
    await lab.waitForLiveTurn(thread.id);
    await sidebarRow(thread.id, ".main-list").click(UI_WAIT);
    await page.locator("#thread-title").filter({ hasText: "broad worker" }).waitFor(UI_WAIT);
    await page.getByRole("button", { name: "Interrupt" }).click();
    await page.locator(".outcome").filter({ hasText: "Interrupt sent." }).waitFor(UI_WAIT);
    await page.locator("[data-thread-status]").filter({ hasText: "interrupted" }).waitFor(UI_WAIT);
    expect(lab.host.store.select("run", "thread_id = ?", [thread.id]).map((run) => run.status)).toEqual([
      "interrupted",
    ]);

    // Nothing runs now and it was not stopped: Stop and Resume have nothing to do, so they are not offered.
    expect(await page.getByRole("button", { name: "Stop" }).getAttribute("title")).toBe(
      "Nothing is running or queued.",
    );
    expect(await page.getByRole("button", { name: "Resume" }).isDisabled()).toBe(true);
    // A fork would run in its source's modes, broader than the session may: refused, and shown as an error.
    await page.getByRole("button", { name: "Fork" }).click();
    const refusal = page.getByRole("alert").filter({ hasText: "broader than the caller's" });
    await refusal.waitFor(UI_WAIT);
    expect(
      await refusal.evaluate(
        (element) => element.classList.contains("error") && !element.classList.contains("outcome"),
      ),
    ).toBe(true);
    expect(await page.locator(".outcome").count()).toBe(0);
  });

  it("shows the providers table, and reads at narrow widths and in dark mode", async () => {
    await page.getByRole("link", { name: "Providers" }).click();
    await page.locator("table th[scope=row]").filter({ hasText: "alpha" }).waitFor(UI_WAIT);
    await screenshot(page, "providers");
    expect(await seriousViolations(page)).toEqual([]);

    const dark = await browser.newContext({
      colorScheme: "dark",
      viewport: { width: 1400, height: 860 },
      storageState: await person.storageState(),
    });
    const darkPage = await dark.newPage();
    await darkPage.goto(`${lab.server.url}/threads/${plannerId}`);
    await darkPage.locator(`.agents-panel [data-child-thread-id="${cleanerChildId}"]`).waitFor(UI_WAIT);
    await screenshot(darkPage, "planner-dark");
    await darkPage.setViewportSize({ width: 420, height: 900 });
    await screenshot(darkPage, "planner-narrow-dark");
    // Nothing wider than the screen.
    expect(
      await darkPage.evaluate(
        () =>
          (globalThis as unknown as PageGlobals).document.documentElement.scrollWidth <=
          (globalThis as unknown as PageGlobals).innerWidth + 1,
      ),
    ).toBe(true);
    await dark.close();
    expect(existsSync(join(SCREENSHOTS, "planner-dark.png"))).toBe(true);
  });
});
