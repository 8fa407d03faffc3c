import { fileURLToPath } from "node:url";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { detectPlatform } from "@switchyard/registry-cache";
import { ApiClient } from "../../../core/test/support/api-client.js";
import { McpLab } from "../../../core/test/support/mcp-lab.js";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "../../../core/test/support/test-host.js";
import {
  shellScriptArchive,
  startRegistryFixture,
  type RegistryFixture,
} from "../../../plugins/acp-registry/test/support/registry-fixture.js";
import {
  type PageGlobals,
  screenshot,
  seriousViolations,
  describeInChromium,
  launchChromium,
} from "./browser-support.js";

// The Registry page as a person uses it: a real server that loaded the ACP Registry plugin,
// an ACP Registry served from 127.0.0.1 (one archive held half-way, so the progress bar is
// seen moving; one tampered with), and Debian's Chromium.

const ACP_REGISTRY_PLUGIN_DIR = fileURLToPath(new URL("../../../plugins/acp-registry/", import.meta.url));

describeInChromium("the Registry page in a real browser", () => {
  const platform = detectPlatform();
  const good = shellScriptArchive("tiny", "#!/bin/sh\necho tiny\n");
  const tampered = shellScriptArchive("tiny", "#!/bin/sh\necho tampered\n");
  const savedUrl = process.env.SWITCHYARD_ACP_REGISTRY_URL;
  let fixture: RegistryFixture;
  let lab: McpLab;
  let browser: Browser;
  let person: BrowserContext;
  let page: Page;
  const UI_WAIT = { timeout: 20_000 };

  beforeAll(async () => {
    if (platform === null) throw new Error("this machine has no ACP Registry platform key");
    fixture = await startRegistryFixture([
      {
        id: "tiny-agent",
        name: "Tiny Agent",
        version: "1.0.0",
        description: "A tiny ACP agent for tests",
        distribution: {
          binary: { [platform]: { archive: "{{origin}}/tiny.tar.gz", cmd: "./tiny", sha256: good.sha256 } },
        },
      },
      {
        id: "tampered-agent",
        name: "Tampered Agent",
        version: "2.0.0",
        description: "Its archive does not match the declared checksum",
        distribution: {
          binary: { [platform]: { archive: "{{origin}}/tampered.tar.gz", cmd: "./tiny", sha256: good.sha256 } },
        },
      },
      {
        id: "slow-agent",
        name: "Slow Agent",
        version: "3.0.0",
        description: "Installed by another client while the page is closed",
        distribution: {
          binary: { [platform]: { archive: "{{origin}}/slow.tar.gz", cmd: "./tiny", sha256: good.sha256 } },
        },
      },
    ]);
    // Held at the first byte past the middle, so the bar reads 50% whatever the archive's length
    // (gzip's output length varies from run to run, and an odd one held at floor(n / 2) read 49%).
    const halfway = Math.ceil(good.body.length / 2);
    fixture.addFile("tiny.tar.gz", good.body, { holdAfter: halfway });
    fixture.addFile("slow.tar.gz", good.body, { holdAfter: halfway });
    fixture.addFile("tampered.tar.gz", tampered.body);
    process.env.SWITCHYARD_ACP_REGISTRY_URL = fixture.url;
    lab = await McpLab.start({ plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR, ACP_REGISTRY_PLUGIN_DIR] });
    browser = await launchChromium();
    person = await browser.newContext({ viewport: { width: 1280, height: 860 }, bypassCSP: true });
    page = await person.newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await lab?.stop();
    await fixture?.close();
    if (savedUrl === undefined) delete process.env.SWITCHYARD_ACP_REGISTRY_URL;
    else process.env.SWITCHYARD_ACP_REGISTRY_URL = savedUrl;
  });

  it("signs in, searches from the keyboard, installs an agent watching its progress, then finds it in the installed list", async () => {
    const { token } = lab.registry.issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:operate"] });
    await page.goto(lab.server.url);
    await page.getByLabel("Token").fill(token);
    await page.getByLabel("Token").press("Enter");
    await page.getByRole("link", { name: "Registry" }).waitFor(UI_WAIT);
    await page.getByRole("link", { name: "Registry" }).click();
    await page.getByRole("heading", { name: "Installed agents" }).waitFor(UI_WAIT);
    await page
      .locator(".registry-installed .empty")
      .filter({ hasText: "No registry agents are installed yet." })
      .waitFor(UI_WAIT);

    // Search with the keyboard only: focus the box, type, Enter.
    await page.getByLabel("Search the ACP Registry").focus();
    await page.keyboard.type("tiny");
    await page.keyboard.press("Enter");
    const card = page.locator('.registry-agent[data-agent-id="tiny-agent"]');
    await card.waitFor(UI_WAIT);
    await page
      .locator(".registry-results .registry-agent")
      .nth(1)
      .waitFor({ state: "detached", ...UI_WAIT });
    expect(await card.innerText()).toContain("A tiny ACP agent for tests");
    expect(await card.locator(".agent-facts").innerText()).toContain(platform);

    // Install from the keyboard: the button takes focus, Enter presses it.
    const install = card.getByRole("button", { name: "Install Tiny Agent 1.0.0" });
    await install.focus();
    await page.keyboard.press("Enter");
    // The download is held half-way by the registry: the bar shows it.
    const progress = card.locator('.install-progress[data-phase="download"]');
    await progress.filter({ hasText: "Downloading 50%" }).waitFor(UI_WAIT);
    expect(Number(await progress.locator("progress").getAttribute("value"))).toBe(50);
    await screenshot(page, "registry-installing");
    expect(await seriousViolations(page)).toEqual([]);

    fixture.release("tiny.tar.gz");
    await card
      .locator('.install-progress[data-phase="done"]')
      .filter({ hasText: "Installed tiny-agent 1.0.0" })
      .waitFor(UI_WAIT);
    const row = page.locator('.registry-installed tr[data-installed-agent="tiny-agent"]');
    await row.waitFor(UI_WAIT);
    expect(await row.innerText()).toContain("1.0.0");
    await card.locator(".badge-completed").filter({ hasText: "installed" }).waitFor(UI_WAIT);
    expect(fixture.requestsFor("tiny.tar.gz")).toBe(1);
    await screenshot(page, "registry-installed");
  });

  it("says plainly why an install failed (a checksum mismatch) and lists nothing half-installed", async () => {
    await page.getByLabel("Search the ACP Registry").fill("tampered");
    await page.getByRole("button", { name: "Search" }).click();
    const card = page.locator('.registry-agent[data-agent-id="tampered-agent"]');
    await card.getByRole("button", { name: "Install Tampered Agent 2.0.0" }).click(UI_WAIT);
    const alert = card.getByRole("alert");
    await alert.filter({ hasText: "checksum_mismatch" }).waitFor(UI_WAIT);
    expect(await alert.innerText()).toContain("Nothing was installed");
    expect(await page.locator(".registry-installed tr[data-installed-agent]").count()).toBe(1);
    expect(await page.locator('.registry-installed tr[data-installed-agent="tampered-agent"]').count()).toBe(0);
    await screenshot(page, "registry-checksum-failure");
    expect(await seriousViolations(page)).toEqual([]);
  });

  it("reads at 420 px in dark mode; a read-only session cannot install, but follows an install another client started", async () => {
    const operator = new ApiClient(
      lab.server.apiUrl,
      lab.registry.issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:operate"] }).token,
    );
    const started = await operator.post("/plugins/acp-registry/install-jobs", { agentId: "slow-agent" });
    expect(started.status, started.text).toBe(202);
    const { token } = lab.registry.issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:read"] });
    const reader = await browser.newContext({ colorScheme: "dark", viewport: { width: 420, height: 900 } });
    const readerPage = await reader.newPage();
    await readerPage.goto(`${lab.server.url}/registry`);
    await readerPage.getByLabel("Token").fill(token);
    await readerPage.getByRole("button", { name: "Sign in" }).click();
    await readerPage.locator('.registry-installed tr[data-installed-agent="tiny-agent"]').waitFor(UI_WAIT);
    const tamperedCard = readerPage.locator('.registry-agent[data-agent-id="tampered-agent"]');
    await tamperedCard.waitFor(UI_WAIT);
    expect(await tamperedCard.getByRole("button").count()).toBe(0);
    expect(await tamperedCard.innerText()).toContain(
      "Installing needs a session for every project with the install verb (switchyard ui gives it), or operate at full-access.",
    );
    // The install the other client started shows its bar here, and finishes live.
    const slowCard = readerPage.locator('.registry-agent[data-agent-id="slow-agent"]');
    await slowCard
      .locator('.install-progress[data-phase="download"]')
      .filter({ hasText: "Downloading 50%" })
      .waitFor(UI_WAIT);
    await screenshot(readerPage, "registry-narrow-dark");
    fixture.release("slow.tar.gz");
    await slowCard.locator('.install-progress[data-phase="done"]').waitFor(UI_WAIT);
    await readerPage.locator('.registry-installed tr[data-installed-agent="slow-agent"]').waitFor(UI_WAIT);
    expect(
      await readerPage.evaluate(
        () =>
          (globalThis as unknown as PageGlobals).document.documentElement.scrollWidth <=
          (globalThis as unknown as PageGlobals).innerWidth + 1,
      ),
    ).toBe(true);
    await reader.close();
  });
});
