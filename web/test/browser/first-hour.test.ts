import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { releaseGate, SCRIPTED_PROVIDER_PLUGIN_DIR } from "@switchyard/testkit/scripted-provider";
import { ApiClient, ok } from "../../../core/test/support/api-client.js";
import { runCli } from "../../../core/test/support/cli.js";
import {
  readRows,
  ServeProcess,
  writeHomeConfig,
  type ServeEndpoint,
} from "../../../core/test/support/serve-process.js";
import {
  type PageGlobals,
  screenshot,
  seriousViolations,
  describeInChromium,
  launchChromium,
} from "./browser-support.js";

/**
 * A person's first hour on a new server, in a real browser against a real `switchyard serve`
 * (a fresh home, the scripted provider as the model, the real Codex plugin with no Codex
 * installed): sign in with the `switchyard ui` link, follow the empty state (add a project,
 * read doctor's findings), start a thread from the composer, watch it delegate, answer its
 * approval inside the thread, and stop a full-access thread from a session whose ceiling is
 * lower. Screenshots at 1280 and 420 px (web/test/screenshots/first-hour-*.png).
 */
describeInChromium("the web UI's first hour", () => {
  let root: string;
  let home: string;
  let gateDir: string;
  let folder: string;
  let serve: ServeProcess;
  let endpoint: ServeEndpoint;
  let browser: Browser;
  let person: BrowserContext;
  let page: Page;
  let projectId: string;
  let otherProjectId: string;
  let firstThreadId: string;
  const UI_WAIT = { timeout: 30_000 };
  const WIDE = { width: 1280, height: 860 };
  const NARROW = { width: 420, height: 860 };

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "switchyard-first-hour-"));
    home = join(root, "home");
    gateDir = join(root, "gates");
    folder = join(root, "app");
    mkdirSync(folder);
    writeHomeConfig(home, {
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
      providers: [
        {
          id: "alpha",
          driver: "scripted",
          options: {
            gateDir,
            stateDir: join(root, "state"),
            models: ["alpha-large", "alpha-small"],
            modelEfforts: { "alpha-large": ["low", "medium", "high"] },
          },
        },
        // The real Codex plugin, told to use an executable that is not there: doctor says what fixes it.
        { id: "codex", driver: "codex", options: { codexPath: join(root, "no-such-codex") } },
      ],
    });
    serve = ServeProcess.start(home, ["--port", "0"], { HOME: root });
    endpoint = await serve.ready;
    browser = await launchChromium();
    // axe-core is injected into the page, which the app's CSP would refuse.
    person = await browser.newContext({ viewport: WIDE, bypassCSP: true });
    page = await person.newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await serve?.terminate();
    if (root !== undefined) rmSync(root, { recursive: true, force: true });
  });

  const noSideScroll = () =>
    page.evaluate(
      () =>
        (globalThis as unknown as PageGlobals).document.documentElement.scrollWidth <=
        (globalThis as unknown as PageGlobals).innerWidth + 1,
    );
  const action = (name: string) => page.locator(".thread-actions").getByRole("button", { name, exact: true });

  it("signs in to an empty server, which says what to do first: add a project, which providers can run work and what fixes the others", async () => {
    const cli = await runCli(["ui", "--home", home, "--url", endpoint.url, "--json"], { env: { HOME: root } });
    expect(cli.code, cli.stderr).toBe(0);
    await page.goto((JSON.parse(cli.stdout) as { link: string }).link);
    await page.getByRole("heading", { name: "Get started", level: 1 }).waitFor(UI_WAIT);
    expect(await page.locator('[data-step="project"]').getAttribute("data-done")).toBe("false");
    await page.locator(".sidebar-empty").filter({ hasText: "No projects yet" }).waitFor(UI_WAIT);

    // Doctor's findings: alpha runs work; codex does not, and the page says why and how to install it.
    await page.locator('[data-provider-id="alpha"][data-finding="ready"]').waitFor(UI_WAIT);
    const codex = page.locator('[data-provider-id="codex"][data-finding="needs setup"]');
    await codex.waitFor(UI_WAIT);
    expect(await codex.locator(".finding-problem").innerText()).toContain(join(root, "no-such-codex"));
    expect(await codex.locator("code.command").innerText()).toMatch(/npm i(nstall)? -g @openai\/codex/);
    expect(await page.locator('[data-step="provider"]').getAttribute("data-done")).toBe("true");
    // How to configure another: the config file and the lines for the driver chosen.
    await page.locator(".add-provider summary").click();
    expect(await page.locator(".add-provider").innerText()).toContain(join(home, "config.json"));
    await page.getByLabel("Driver").selectOption("claude");
    expect(JSON.parse(await page.locator(".config-snippet").innerText())).toEqual({
      providers: [{ id: "claude", driver: "claude" }],
    });

    // Nothing can start before there is a project.
    await page.locator(".new-thread-bar [role=note]").filter({ hasText: "Add a project first." }).waitFor(UI_WAIT);
    expect(await page.getByRole("button", { name: "Start thread" }).isDisabled()).toBe(true);
    await screenshot(page, "first-hour-empty-1280");
    expect(await seriousViolations(page)).toEqual([]);
    await page.setViewportSize(NARROW);
    await screenshot(page, "first-hour-empty-420");
    expect(await noSideScroll()).toBe(true);
    expect(await seriousViolations(page)).toEqual([]);
    await page.setViewportSize(WIDE);
    // The same page in dark mode, in another tab of the same session.
    const dark = await browser.newContext({
      colorScheme: "dark",
      viewport: NARROW,
      storageState: await person.storageState(),
    });
    const darkPage = await dark.newPage();
    await darkPage.goto(endpoint.url);
    await darkPage.locator('[data-provider-id="codex"][data-finding="needs setup"]').waitFor(UI_WAIT);
    await screenshot(darkPage, "first-hour-empty-420-dark");
    await dark.close();
  });

  it("adds a project: a wrong folder is refused as an error, never in the success colour; the right one is in the sidebar at once", async () => {
    const path = page.getByLabel("Folder", { exact: true });
    await path.fill("code/app");
    await page.getByRole("button", { name: "Add project" }).click();
    const refusal = page.locator(".add-project [role=alert]");
    await refusal.filter({ hasText: '"code/app" is not an absolute path' }).waitFor(UI_WAIT);
    expect(
      await refusal.evaluate(
        (element) => element.classList.contains("error") && !element.classList.contains("outcome"),
      ),
    ).toBe(true);
    expect(await page.locator(".add-project .outcome").count()).toBe(0);
    await path.fill(join(root, "not-made"));
    await page.getByRole("button", { name: "Add project" }).click();
    await refusal.filter({ hasText: `${join(root, "not-made")} is not an existing folder` }).waitFor(UI_WAIT);
    expect(readRows(home, "SELECT id FROM projects")).toEqual([]);

    await path.fill(folder);
    await page.getByLabel("Name", { exact: true }).fill("my app");
    await page.getByRole("button", { name: "Add project" }).click();
    await page.locator(".add-project .outcome").filter({ hasText: "Added my app." }).waitFor(UI_WAIT);
    expect(await page.locator(".add-project [role=alert]").count()).toBe(0);
    const [project] = readRows<{ id: string; name: string; root_path: string }>(
      home,
      "SELECT id, name, root_path FROM projects",
    );
    expect(project).toMatchObject({ name: "my app", root_path: folder });
    projectId = project!.id;
    await page
      .locator(`.sidebar [data-project-id="${projectId}"] .project-name`)
      .filter({ hasText: "my app" })
      .waitFor(UI_WAIT);
    expect(await page.locator('[data-step="project"]').getAttribute("data-done")).toBe("true");
  });

  it("starts a thread from the composer with the model, effort and modes picked; it opens, streams, delegates, and its approval is answered inside it", async () => {
    const composer = page.getByRole("form", { name: "New thread" });
    expect(await composer.getByLabel("Project").inputValue()).toBe(projectId);
    expect(await composer.getByLabel("Provider").inputValue()).toBe("alpha");
    // codex cannot run work: listed, not choosable.
    expect(await composer.locator('option[value="codex"]').isDisabled()).toBe(true);
    // Efforts follow the model: alpha-small takes none, alpha-large three.
    await composer.getByLabel("Model").selectOption("alpha-small");
    expect(await composer.getByLabel("Effort").isDisabled()).toBe(true);
    await composer.getByLabel("Model").selectOption("alpha-large");
    await composer.getByLabel("Effort").selectOption("high");
    // The session's ceiling (switchyard ui: approval-required) rules out broader modes.
    expect(await composer.getByLabel("Runtime mode").inputValue()).toBe("approval-required");
    expect(await composer.locator('option[value="full-access"]').isDisabled()).toBe(true);
    expect(await composer.locator('option[value="full-access"]').innerText()).toBe(
      "Full access (above this session's runtime ceiling, approval-required)",
    );
    await composer.getByLabel("Title").fill("first thread");
    const child = {
      task: "@@gate review-hold @@reply reviewed",
      title: "reviewer",
      target: { providerInstanceId: "alpha" },
      mode: "wait",
    };
    await composer
      .getByLabel("Prompt")
      .fill(`@@tool delegate_task ${JSON.stringify(child)} @@approve rm -rf build @@effort`);
    await screenshot(page, "first-hour-composer-1280");
    await composer.getByRole("button", { name: "Start thread" }).click();

    // The new thread opens, says what it runs on, and streams.
    await page.locator("#thread-title").filter({ hasText: "first thread" }).waitFor(UI_WAIT);
    firstThreadId = decodeURIComponent(new URL(page.url()).pathname.slice("/threads/".length));
    await page
      .locator(".thread-header .outcome")
      .filter({ hasText: "Started on alpha · alpha-large · high · approval-required · default." })
      .waitFor(UI_WAIT);
    await page.locator(".item-user").filter({ hasText: "@@tool delegate_task" }).waitFor(UI_WAIT);
    const reviewer = page.locator(".agents-panel [data-child-thread-id]").filter({ hasText: "reviewer" });
    await reviewer.locator(".badge").filter({ hasText: "running" }).waitFor(UI_WAIT);
    await page.locator('.sidebar [data-section="subagents"] a').filter({ hasText: "reviewer" }).waitFor(UI_WAIT);
    releaseGate(gateDir, "review-hold");
    await reviewer.locator(".badge").filter({ hasText: "completed" }).waitFor(UI_WAIT);
    await reviewer.locator(".last-reply").filter({ hasText: "reviewed" }).waitFor(UI_WAIT);

    // The approval is answered where it was asked, not only in the inbox.
    const approval = page.locator(".thread-requests .request").filter({ hasText: "rm -rf build" });
    await approval.waitFor(UI_WAIT);
    await page.locator("[data-thread-status]").filter({ hasText: "needs attention" }).waitFor(UI_WAIT);
    await screenshot(page, "first-hour-approval-1280");
    expect(await seriousViolations(page)).toEqual([]);
    await approval.getByRole("button", { name: "Approve" }).click();
    await page.locator(".thread-requests").waitFor({ state: "detached", ...UI_WAIT });
    await page.locator(".item-assistant").filter({ hasText: "effort: high" }).waitFor(UI_WAIT);
    await page.locator("[data-thread-status]").filter({ hasText: "completed" }).waitFor(UI_WAIT);

    // What the composer asked for is what the server ran.
    const [stored] = readRows<{ data: string }>(home, "SELECT data FROM threads WHERE id = ?", [firstThreadId]);
    expect(JSON.parse(stored!.data)).toMatchObject({
      projectId,
      model: "alpha-large",
      effort: "high",
      runtimeMode: "approval-required",
      interactionMode: "default",
      creationSource: "api",
    });
    const decisions = readRows<{ data: string }>(home, "SELECT data FROM runtime_requests WHERE thread_id = ?", [
      firstThreadId,
    ]).map((row) => JSON.parse(row.data) as { status: string });
    expect(decisions.map((request) => request.status)).toEqual(["answered"]);

    // A finished thread offers nothing to stop, interrupt or resume.
    for (const name of ["Stop", "Interrupt", "Resume"]) expect(await action(name).isDisabled(), name).toBe(true);
    expect(await action("Stop").getAttribute("title")).toBe("Nothing is running or queued.");
    expect(await action("Settle").isDisabled()).toBe(false);
  });

  it("stops a full-access thread from a session whose ceiling is approval-required; Resume, broader than the session, is refused as an error", async () => {
    const issued = await runCli(
      ["token", "issue", "--json", "--max-runtime-mode", "full-access", "--label", "router", "--home", home],
      { env: { HOME: root } },
    );
    expect(issued.code, issued.stderr).toBe(0);
    const router = new ApiClient(`${endpoint.url}/api/v1`, (JSON.parse(issued.stdout) as { token: string }).token);
    // In a project added on the server's machine meanwhile: projects have no events, the page learns of it from its thread.
    const other = join(root, "tools");
    mkdirSync(other);
    const added = await runCli(["project", "add", other, "--json", "--home", home], { env: { HOME: root } });
    expect(added.code, added.stderr).toBe(0);
    otherProjectId = (JSON.parse(added.stdout) as { id: string }).id;
    const created = await ok(
      router.post("/threads", {
        projectId: otherProjectId,
        threads: [
          {
            title: "broad worker",
            prompt: "@@gate broad-hold @@reply never",
            runtimeMode: "full-access",
            target: { providerInstanceId: "alpha" },
          },
        ],
      }),
      201,
    );
    const threadId = created.threads[0].thread.threadId as string;
    expect(created.threads[0].thread.runtimeMode).toBe("full-access");

    // It arrives in the sidebar from the event stream, under its new project.
    await page
      .locator(`.sidebar [data-project-id="${otherProjectId}"] .main-list a[data-thread-id="${threadId}"]`)
      .click(UI_WAIT);
    await page.locator("#thread-title").filter({ hasText: "broad worker" }).waitFor(UI_WAIT);
    await page.locator("[data-thread-status]").filter({ hasText: "running" }).waitFor(UI_WAIT);
    expect(await action("Resume").isDisabled()).toBe(true);
    expect(await action("Settle").isDisabled()).toBe(true);
    await action("Stop").click();
    await page.locator(".thread-header .outcome").filter({ hasText: "Stopped" }).waitFor(UI_WAIT);
    await page.locator("[data-thread-status]").filter({ hasText: "interrupted" }).waitFor(UI_WAIT);
    await page.locator("[data-thread-stopped]").waitFor(UI_WAIT);
    expect(
      readRows<{ status: string }>(home, "SELECT status FROM runs WHERE thread_id = ?", [threadId]).map(
        (run) => run.status,
      ),
    ).toEqual(["interrupted"]);
    // Stopped: Stop has nothing left to do, Resume has.
    await page
      .locator(".thread-actions button:disabled")
      .filter({ hasText: /^Stop$/ })
      .waitFor(UI_WAIT);
    expect(await action("Stop").isDisabled()).toBe(true);
    expect(await action("Resume").isDisabled()).toBe(false);

    await action("Resume").click();
    const refusal = page.getByRole("alert").filter({ hasText: "broader than the caller's" });
    await refusal.waitFor(UI_WAIT);
    expect(
      await refusal.evaluate(
        (element) => element.classList.contains("error") && !element.classList.contains("outcome"),
      ),
    ).toBe(true);
    expect(await page.locator(".thread-header .outcome").count()).toBe(0);
    await screenshot(page, "first-hour-stopped-1280");
  });

  it("at 420 px keeps the sidebar in a drawer the top bar opens, and nothing is wider than the screen", async () => {
    await page.setViewportSize(NARROW);
    await page.goto(`${endpoint.url}/threads/${firstThreadId}`);
    await page.locator("#thread-title").filter({ hasText: "first thread" }).waitFor(UI_WAIT);
    const toggle = page.getByRole("button", { name: "Threads" });
    expect(await toggle.getAttribute("aria-expanded")).toBe("false");
    expect(await page.locator("#sidebar").isVisible()).toBe(false);
    expect(await noSideScroll()).toBe(true);
    await screenshot(page, "first-hour-thread-420");

    await toggle.click();
    await page.locator("#sidebar .drawer-close:focus").waitFor(UI_WAIT);
    expect(await toggle.getAttribute("aria-expanded")).toBe("true");
    await screenshot(page, "first-hour-drawer-420");
    expect(await seriousViolations(page)).toEqual([]);
    await page.keyboard.press("Escape");
    await page.locator("#sidebar").waitFor({ state: "hidden", ...UI_WAIT });

    // Choosing a thread in the drawer opens it and closes the drawer.
    await toggle.click();
    await page.locator(`#sidebar .main-list a`).filter({ hasText: "broad worker" }).click();
    await page.locator("#thread-title").filter({ hasText: "broad worker" }).waitFor(UI_WAIT);
    await page.locator("#sidebar").waitFor({ state: "hidden", ...UI_WAIT });

    // The composer on its own page, at both widths; from a project's + New, with that project chosen.
    await toggle.click();
    await page.getByRole("link", { name: "New thread in tools" }).click();
    await page.getByRole("heading", { name: "New thread", level: 1 }).waitFor(UI_WAIT);
    expect(new URL(page.url()).search).toBe(`?project=${otherProjectId}`);
    const composer = page.getByRole("form", { name: "New thread" });
    await composer
      .locator("#pick-provider option")
      .filter({ hasText: /^alpha$/ })
      .waitFor({ state: "attached", ...UI_WAIT });
    expect(await composer.getByLabel("Project").inputValue()).toBe(otherProjectId);
    expect(await noSideScroll()).toBe(true);
    await screenshot(page, "first-hour-new-thread-420");
    expect(await seriousViolations(page)).toEqual([]);
    await page.setViewportSize(WIDE);
    await screenshot(page, "first-hour-new-thread-1280");
  });

  it("shows a read-only session the composer without letting it start anything, and doctor's findings on the Providers page", async () => {
    const issued = await runCli(["token", "issue", "--json", "--verbs", "read", "--label", "watcher", "--home", home], {
      env: { HOME: root },
    });
    expect(issued.code, issued.stderr).toBe(0);
    // This context keeps the page's CSP: the new screens run under it.
    const reader = await browser.newContext({ viewport: WIDE });
    const violations: string[] = [];
    const readerPage = await reader.newPage();
    readerPage.on("console", (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    await readerPage.goto(endpoint.url);
    await readerPage.locator("#token").fill((JSON.parse(issued.stdout) as { token: string }).token);
    await readerPage.getByRole("button", { name: "Sign in" }).click();
    await readerPage.getByRole("heading", { name: "New thread", level: 1 }).waitFor(UI_WAIT);
    await readerPage
      .locator(".new-thread-bar [role=note]")
      .filter({ hasText: "needs the operate verb" })
      .waitFor(UI_WAIT);
    expect(await readerPage.getByRole("button", { name: "Start thread" }).isDisabled()).toBe(true);
    await readerPage.getByRole("link", { name: "Providers" }).click();
    await readerPage
      .locator('[data-provider-id="codex"][data-finding="needs setup"] code.command')
      .filter({ hasText: "@openai/codex" })
      .waitFor(UI_WAIT);
    await screenshot(readerPage, "first-hour-providers-1280");
    expect(violations).toEqual([]);
    await reader.close();
  });
});
