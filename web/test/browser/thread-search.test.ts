import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ApiClient, ok } from "../../../core/test/support/api-client.js";
import { McpLab } from "../../../core/test/support/mcp-lab.js";
import {
  screenshotVariants,
  seriousViolations,
  signInWithToken,
  describeInChromium,
  launchChromium,
} from "./browser-support.js";

/**
 * A real server with threads whose replies hold words their titles do not: a person types a
 * word into the sidebar's box, presses Enter, sees the server's matches with the words around
 * them, and opens the thread from a result.
 */
describeInChromium("thread search in the web UI", () => {
  let lab: McpLab;
  let browser: Browser;
  let page: Page;
  let operator: ApiClient;
  const UI_WAIT = { timeout: 20_000 };

  const create = async (prompt: string, title: string) => {
    const created = await ok(
      operator.post("/threads", {
        projectId: lab.projectId,
        threads: [{ prompt, title, target: { providerInstanceId: "alpha" } }],
      }),
      201,
    );
    const threadId = created.threads[0].thread.threadId as string;
    await ok(operator.get(`/threads/${threadId}/wait`));
    return threadId;
  };

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
    await signInWithToken(page, lab.server.url, token(["orchestration:read"]));
  });

  afterAll(async () => {
    await browser?.close();
    await lab?.stop();
  });

  it("finds a thread by a word only its transcript holds, and opens it from the result", async () => {
    const wanted = await create(
      "@@reply The flaky test was a timezone bug in the invoice exporter; pinning TZ fixed it.",
      "Nightly CI failures",
    );
    await create("@@reply The invoice template now shows the VAT number.", "Invoice layout");
    await create("@@reply Nothing to report.", "Weekly check-in");
    await page.reload();
    await page.locator(`#sidebar a[data-thread-id="${wanted}"]`).waitFor(UI_WAIT);

    // The word is in no title: the sidebar's title filter finds nothing, Enter asks the server.
    await page.keyboard.press("/");
    await page.keyboard.type("timezone");
    await page.locator("#sidebar .main-list .empty").waitFor(UI_WAIT);
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/search\?q=timezone$/, UI_WAIT);
    const result = page.locator(`.search-result[data-thread-id="${wanted}"]`);
    await result.waitFor(UI_WAIT);
    expect(await page.locator(".search-result").count()).toBe(1);
    expect(await result.locator(".thread-title").textContent()).toBe("Nightly CI failures");
    expect(await result.locator(".search-where").textContent()).toBe("in an assistant message");
    expect(await result.locator(".snippet mark").allTextContents()).toEqual(["timezone"]);
    expect(await result.locator(".snippet").textContent()).toContain("was a timezone bug in the invoice exporter");

    // Two words, both required, the last a prefix; the other invoice thread holds no "expo…".
    await page.locator("#search-query").fill("invoice expo");
    await page.locator("#search-query").press("Enter");
    await page.waitForURL(/\/search\?q=invoice%20expo$/, UI_WAIT);
    await page.locator(".search-result mark", { hasText: "exporter" }).waitFor(UI_WAIT);
    expect(await page.locator(".search-result").count()).toBe(1);
    // Operators are text: a lone quote or NEAR finds nothing, and breaks nothing.
    await page.locator("#search-query").fill('"invoice NEAR');
    await page.locator("#search-query").press("Enter");
    await page.locator(".search-project .empty").waitFor(UI_WAIT);

    await page.locator("#search-query").fill("timezone");
    await page.locator("#search-query").press("Enter");
    await result.waitFor(UI_WAIT);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshotVariants(page, "search");

    await result.click();
    await page.waitForURL(new RegExp(`/threads/${wanted.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`), UI_WAIT);
    await page.locator("main").getByText("pinning TZ fixed it").first().waitFor(UI_WAIT);
  });
});
