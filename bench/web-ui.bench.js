// The web UI (web/, built into core/dist/web):
// - bundle: the JavaScript and CSS `switchyard serve` sends for the first page, raw and
//   gzipped (goal: < 300 kB gzipped JS).
// - first render of a 1,000-thread project: a real server on a real home with 1,000 idle
//   threads, Debian's Chromium (playwright-core) signed in with a token; from navigation until
//   the sidebar's list holds all 1,000 threads (read through the API as rows, 1,000 a page, every
//   page asked for at once; until December 2026 as shells, 100 a page) and its rows fill the
//   sidebar's height. Until December 2026 it ended at
//   the 1,000th row in the page; a list that long now keeps only the rows near the screen in the
//   page (web/src/ui/windowed-list.tsx), so the 1,000th row is there only once scrolled to:
//   - reaching the 1,000th row: after that, the sidebar scrolled to its bottom until the oldest
//     thread's row is in the page (what the old definition's last row cost, paid on demand).
//   Skipped, with a note, when Chromium is not installed (SWITCHYARD_CHROMIUM names another).
// - scrolling a 5,000-item thread: the next older page's time and the most items in the page.
// WEB_BENCH_THREADS changes the thread count, WEB_BENCH_RUNS the navigations (5), and
// WEB_BENCH_TIMELINE=1 prints each navigation's timeline from the page's Performance API (when
// the app's script ran, each API request's start and last byte, the main thread's long tasks).
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const THREADS = Number(process.env.WEB_BENCH_THREADS ?? 1000);
const CHROMIUM = process.env.SWITCHYARD_CHROMIUM ?? "/usr/bin/chromium";
const BUNDLE_GOAL_KB = 300;
const WEB_DIR = fileURLToPath(new URL("../core/dist/web/", import.meta.url));

function bundleRows() {
  const assets = join(WEB_DIR, "assets");
  if (!existsSync(assets)) throw new Error(`The web UI is not built (${assets}): run npm run build.`);
  const sizes = { js: { raw: 0, gzip: 0 }, css: { raw: 0, gzip: 0 } };
  for (const file of readdirSync(assets)) {
    const kind = file.endsWith(".js") ? "js" : file.endsWith(".css") ? "css" : null;
    if (kind === null) continue;
    const content = readFileSync(join(assets, file));
    sizes[kind].raw += content.length;
    sizes[kind].gzip += gzipSync(content, { level: 9 }).length;
  }
  return [
    {
      metric: "bundle JS gzipped",
      value: sizes.js.gzip / 1024,
      unit: "kB",
      note: `goal < ${BUNDLE_GOAL_KB} kB; ${(sizes.js.raw / 1024).toFixed(1)} kB raw`,
    },
    {
      metric: "bundle CSS gzipped",
      value: sizes.css.gzip / 1024,
      unit: "kB",
      note: `${(sizes.css.raw / 1024).toFixed(1)} kB raw`,
    },
  ];
}

async function firstRenderRow() {
  if (!existsSync(CHROMIUM))
    return {
      metric: `first render, ${THREADS}-thread project`,
      value: "skipped",
      note: `no Chromium at ${CHROMIUM} (apt-get install chromium)`,
    };
  const { chromium } = await import("playwright-core");
  const { createSilentLogger, McpSessionRegistry, startServer, SwitchyardHost } = await import("../core/dist/index.js");
  const { SCRIPTED_PROVIDER_PLUGIN_DIR } = await import("../testkit/dist/scripted-provider/index.js");
  const home = mkdtempSync(join(tmpdir(), "switchyard-bench-web-"));
  const workspace = mkdtempSync(join(tmpdir(), "switchyard-bench-ws-"));
  const host = await SwitchyardHost.create({
    home,
    builtinPluginsDir: null,
    logger: createSilentLogger(),
    config: {
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
      providers: [{ id: "scripted", driver: "scripted", options: { gateDir: join(home, "gates") } }],
    },
  });
  const server = await startServer(host, { port: 0 });
  let browser = null;
  try {
    const project = await host.projects.add(workspace);
    for (let i = 0; i < THREADS; i += 1) {
      await host.threads.createThread({
        projectId: project.id,
        providerInstanceId: "scripted",
        title: `thread ${i + 1}`,
        createdBy: "user",
        creationSource: "api",
      });
    }
    const { token } = host.container
      .resolve(McpSessionRegistry)
      .issueClientToken({ ttlMs: 3_600_000, capabilities: ["orchestration:read"], label: "web bench" });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox"] });
    const page = await (await browser.newContext()).newPage();
    if (process.env.WEB_BENCH_TIMELINE === "1")
      await page.addInitScript(() => {
        globalThis.benchLongTasks = [];
        new PerformanceObserver((list) => {
          for (const entry of list.getEntries())
            globalThis.benchLongTasks.push({ start: entry.startTime, duration: entry.duration });
        }).observe({ type: "longtask", buffered: true });
      });
    await page.goto(server.url);
    await page.evaluate(async (secret) => {
      const response = await fetch("/api/v1/ui/session", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ token: secret }),
      });
      if (!response.ok) throw new Error(`sign-in failed: ${response.status}`);
      // Where the UI keeps the session's page secret (web/src/api/page-secret.ts).
      globalThis.localStorage.setItem("switchyard.pageSecret", (await response.json()).pageSecret);
    }, token);
    const RUNS = Number(process.env.WEB_BENCH_RUNS ?? 5);
    const timelines = [];
    const samples = [];
    const scrolls = [];
    let rowsInPage = 0;
    for (let run = 0; run < RUNS; run += 1) {
      const started = performance.now();
      await page.goto(server.url);
      // All the project's threads in the list (data-rows counts them, in the page or not), and
      // its rows down to the sidebar's bottom edge in the page.
      await page.waitForFunction(
        (count) => {
          const list = globalThis.document.querySelector(".main-list");
          if (list === null || Number(list.dataset.rows) < count) return false;
          const rows = list.querySelectorAll("a[data-thread-id]");
          const sidebar = globalThis.document.querySelector("#sidebar").getBoundingClientRect();
          const last = rows[rows.length - 1];
          return last !== undefined && (rows.length === count || last.getBoundingClientRect().bottom >= sidebar.bottom);
        },
        THREADS,
        { timeout: 60_000 },
      );
      samples.push(performance.now() - started);
      if (process.env.WEB_BENCH_TIMELINE === "1") timelines.push(await pageTimeline(page, samples.at(-1)));
      rowsInPage = await page.evaluate(
        () => globalThis.document.querySelectorAll(".main-list a[data-thread-id]").length,
      );
      const scrolled = performance.now();
      await page.evaluate(() => {
        const sidebar = globalThis.document.querySelector("#sidebar");
        sidebar.scrollTo({ top: sidebar.scrollHeight });
      });
      // The oldest thread (made first) is the list's last row.
      await page.waitForFunction(
        (count) =>
          globalThis.document.querySelector(
            `.main-list li[aria-posinset="${count}"], .main-list li:nth-child(${count})`,
          ) !== null,
        THREADS,
        { timeout: 60_000 },
      );
      scrolls.push(performance.now() - scrolled);
    }
    for (const line of timelines) process.stderr.write(`${line}\n`);
    const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
    const firstRender = {
      metric: `first render, ${THREADS}-thread project`,
      value: median(samples),
      unit: "ms",
      note: `median of ${RUNS} navigations (${samples.map((ms) => ms.toFixed(0)).join(", ")}): page, API lists, all ${THREADS} in the sidebar's list, its first screenful of rows (${rowsInPage} rows in the page)`,
    };
    const lastRow = {
      metric: `sidebar scrolled to the ${THREADS.toLocaleString("en")}th row`,
      value: median(scrolls),
      unit: "ms",
      note: `median of ${RUNS}: from the scroll to the oldest thread's row in the page`,
    };
    return [firstRender, lastRow, await longThreadRow(host, project.id, server.url, page)];
  } finally {
    await browser?.close();
    await server.close();
    await host.stop();
    rmSync(home, { recursive: true, force: true });
    rmSync(workspace, { recursive: true, force: true });
  }
}

/**
 * One navigation's timeline, in ms from its start: the document's last byte, the app's script
 * (its file's last byte, DOMContentLoaded), each API request (start-last byte), the long tasks.
 */
async function pageTimeline(page, total) {
  const entries = await page.evaluate(() => {
    const navigation = performance.getEntriesByType("navigation")[0];
    const resources = performance.getEntriesByType("resource").map((entry) => ({
      name: new URL(entry.name).pathname + new URL(entry.name).search,
      start: entry.startTime,
      end: entry.responseEnd,
    }));
    const marks = performance
      .getEntriesByType("mark")
      .map((mark) => ({ name: mark.name.replace(/^switchyard:/, ""), start: mark.startTime }));
    return {
      html: navigation.responseEnd,
      dcl: navigation.domContentLoadedEventEnd,
      resources,
      marks,
      long: globalThis.benchLongTasks ?? [],
    };
  });
  const ms = (value) => value.toFixed(0);
  const requests = entries.resources.map((entry) => {
    const name = entry.name.replace(/^\/api\/v1/, "").replace(/\?.*$/, (q) => (q.includes("view=row") ? "?rows" : ""));
    return `${name} ${ms(entry.start)}-${ms(entry.end)}`;
  });
  const marks = entries.marks.map((mark) => `${mark.name} ${ms(mark.start)}`);
  return `  ${ms(total)} ms: html ${ms(entries.html)}, dcl ${ms(entries.dcl)}; ${[...requests, ...marks].join("; ")}; long tasks ${entries.long.map((t) => `${ms(t.start)}+${ms(t.duration)}`).join(" ")}`;
}

/**
 * Scrolling up a 5,000-item thread (markdown replies): how long the next older page takes to be
 * in the page, and how many items the page holds at most (the timeline keeps a window).
 */
async function longThreadRow(host, projectId, serverUrl, page) {
  const { thread } = await host.threads.createThread({
    projectId,
    providerInstanceId: "scripted",
    title: "long history",
    createdBy: "user",
    creationSource: "api",
  });
  const now = new Date().toISOString();
  const ITEMS = 5_000;
  host.store.transaction(() =>
    host.store.append(
      null,
      Array.from({ length: ITEMS }, (_, i) => ({
        entity: "item",
        record: {
          id: `item:bench:${i}`,
          threadId: thread.id,
          runId: null,
          attemptId: null,
          position: i + 1,
          kind: "assistant_message",
          status: "completed",
          text: `History reply ${i + 1} with **markdown**, \`code\` and a list:\n\n- one\n- two\n\n\`\`\`sh\nnpm test\n\`\`\``,
          data: { role: "assistant" },
          createdBy: "provider",
          creationSource: "provider",
          createdAt: now,
          updatedAt: now,
        },
      })),
      now,
    ),
  );
  await page.goto(`${serverUrl}/threads/${thread.id}`);
  await page.waitForFunction(() => globalThis.document.querySelectorAll(".items > li").length > 0, undefined, {
    timeout: 60_000,
  });
  const PAGES = 20;
  const samples = [];
  let most = 0;
  for (let i = 0; i < PAGES; i += 1) {
    const first = await page.evaluate(() =>
      globalThis.document.querySelector(".items > li")?.getAttribute("data-position"),
    );
    const started = performance.now();
    await page.evaluate(() => globalThis.document.querySelector(".timeline").scrollTo({ top: 0 }));
    await page.waitForFunction(
      (position) => globalThis.document.querySelector(".items > li")?.getAttribute("data-position") !== position,
      first,
      { timeout: 60_000 },
    );
    samples.push(performance.now() - started);
    most = Math.max(most, await page.evaluate(() => globalThis.document.querySelectorAll(".items > li").length));
  }
  samples.sort((a, b) => a - b);
  return {
    metric: `scroll up a ${ITEMS.toLocaleString("en")}-item thread, next older page`,
    value: samples[Math.floor(samples.length / 2)],
    unit: "ms",
    note: `median of ${PAGES} pages of 50 (read, render, scroll kept); at most ${most} items in the page`,
  };
}

export default async function run() {
  const rendered = await firstRenderRow();
  return { name: "web-ui", rows: [...bundleRows(), ...(Array.isArray(rendered) ? rendered : [rendered])] };
}
