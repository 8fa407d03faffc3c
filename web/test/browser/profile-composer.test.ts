import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { FULL_SCRIPTED_CAPABILITIES } from "@switchyard/testkit";
import { afterAll, beforeAll, expect, it } from "vitest";
import { McpLab } from "../../../core/test/support/mcp-lab.js";
import { scriptedInstance } from "../../../core/test/support/test-host.js";
import {
  describeInChromium,
  launchChromium,
  screenshot,
  seriousViolations,
  signInWithToken,
} from "./browser-support.js";

/**
 * The New thread page's profile picker, in Debian's Chromium against a real server with
 * scripted providers: it lists the project's and the config's profiles with their
 * descriptions, moves to a provider that can carry the chosen one (and rules out those that
 * cannot, saying why), holds the modes to its ceiling, and starts the thread with it.
 * Screenshot: web/test/screenshots/profile-composer-1280.png.
 */
describeInChromium("the composer's profile picker, in a real browser", () => {
  let lab: McpLab;
  let browser: Browser;
  let page: Page;
  const UI_WAIT = { timeout: 20_000 };

  beforeAll(async () => {
    const { tools } = FULL_SCRIPTED_CAPABILITIES;
    const bare = {
      ...FULL_SCRIPTED_CAPABILITIES,
      tools: { ...tools, rules: { allow: false, deny: false, ask: false, allowOnly: false } },
    };
    lab = await McpLab.start({
      providers: ({ home, gateDir }) => [
        scriptedInstance("alpha", { gateDir, stateDir: `${home}/scripted-state`, models: ["alpha-large"] }),
        scriptedInstance("beta", { gateDir, stateDir: `${home}/scripted-state`, models: ["beta-1", "beta-2"] }),
        scriptedInstance("bare", { gateDir, stateDir: `${home}/scripted-state`, capabilities: bare }),
      ],
      profiles: [{ name: "no-shell", description: "Works without a shell", tools: { deny: ["shell"] } }],
    });
    mkdirSync(join(lab.t.workspace, ".switchyard", "agents"), { recursive: true });
    writeFileSync(
      join(lab.t.workspace, ".switchyard", "agents", "reviewer.md"),
      "---\ndescription: Reviews a change and reports findings, most severe first\ntarget:\n  providerInstanceId: beta\n  model: beta-2\nmaxRuntimeMode: auto-accept-edits\n---\nReview the change.\n",
    );
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, bypassCSP: true });
    page = await context.newPage();
    page.on("pageerror", (error) => console.error("page error:", error));
    const person = lab.registry.issueClientToken({
      ttlMs: 3_600_000,
      capabilities: ["orchestration:read", "orchestration:operate"],
      ceiling: { runtimeMode: "full-access", interactionMode: "default" },
    }).token;
    await signInWithToken(page, lab.server.url, person);
  });

  afterAll(async () => {
    await browser?.close();
    await lab?.stop();
  });

  it("lists the profiles with their descriptions, follows the chosen one's provider and ceiling, and starts the thread with it", async () => {
    await page.goto(`${lab.server.url}/new?project=${encodeURIComponent(lab.projectId)}`);
    const composer = page.getByRole("form", { name: "New thread" });
    await composer
      .locator("#pick-profile option")
      .filter({ hasText: "reviewer" })
      .waitFor({ state: "attached", ...UI_WAIT });
    expect(await composer.locator("#pick-profile option").allInnerTexts()).toEqual(["None", "reviewer", "no-shell"]);

    // A profile that cannot run on some providers: those are listed, not choosable, and say why.
    await composer.getByLabel("Profile").selectOption("no-shell");
    expect(await page.locator("#pick-profile-hint").innerText()).toBe("Works without a shell");
    expect(await composer.locator('#pick-provider option[value="bare"]').isDisabled()).toBe(true);
    expect(await composer.locator('#pick-provider option[value="bare"]').innerText()).toBe(
      "bare (cannot take profile no-shell)",
    );

    // The reviewer names its provider and model, and caps the runtime mode.
    await composer.getByLabel("Profile").selectOption("reviewer");
    expect(await page.locator("#pick-profile-hint").innerText()).toBe(
      "Reviews a change and reports findings, most severe first",
    );
    expect(await composer.getByLabel("Provider").inputValue()).toBe("beta");
    expect(await composer.getByLabel("Model").inputValue()).toBe("beta-2");
    expect(await composer.getByLabel("Model").isDisabled()).toBe(true);
    expect(await composer.locator('#pick-provider option[value="alpha"]').isDisabled()).toBe(true);
    const fullAccess = composer.locator('#pick-runtime-mode option[value="full-access"]');
    expect(await fullAccess.isDisabled()).toBe(true);
    expect(await fullAccess.innerText()).toBe("Full access (above profile reviewer's ceiling, auto-accept-edits)");
    await composer.getByLabel("Runtime mode").selectOption("auto-accept-edits");
    await composer.getByLabel("Prompt").fill("@@reply reviewed");
    await screenshot(page, "profile-composer-1280");
    expect(await seriousViolations(page)).toEqual([]);

    await composer.getByRole("button", { name: "Start thread" }).click();
    await page.locator(".thread-header .outcome").filter({ hasText: "profile reviewer" }).waitFor(UI_WAIT);
    const threadId = decodeURIComponent(new URL(page.url()).pathname.slice("/threads/".length));
    expect(lab.host.store.get("thread", threadId)).toMatchObject({
      providerInstanceId: "beta",
      model: "beta-2",
      runtimeMode: "auto-accept-edits",
      profile: { name: "reviewer", source: "switchyard" },
    });
    const attempt = await lab.host.waiter.waitFor(
      () => lab.host.store.select("attempt", "thread_id = ?", [threadId])[0] ?? null,
      { timeoutMs: 10_000 },
    );
    expect(attempt?.instructions).toBe("Review the change.");
  });
});
