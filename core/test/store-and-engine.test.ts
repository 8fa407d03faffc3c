import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TOKENS } from "../src/host/tokens.js";
import { loadConfig, parseConfig } from "../src/config/config-loader.js";
import { Store } from "../src/store/store.js";
import { MIGRATIONS } from "../src/store/migrations.js";
import type { EngineReaction } from "../src/engine/engine-reaction.js";
import { DelegationSaga } from "../src/services/delegation/delegation-saga.js";
import { startTestHost, type TestHost } from "./support/test-host.js";
import { sqliteStore } from "./support/sqlite-store.js";

describe("store and engine", () => {
  let t: TestHost | null = null;
  afterEach(async () => {
    await t?.cleanup();
    t = null;
  });

  it("replays a command's receipt for the same id and refuses the id for another request", async () => {
    t = await startTestHost();
    const project = await t.host.projects.add(t.workspace);
    const request = {
      commandId: "cmd:test:same",
      projectId: project.id,
      providerInstanceId: "scripted",
      prompt: "@@reply once",
      createdBy: "user" as const,
      creationSource: "cli" as const,
    };
    const first = await t.host.threads.createThread(request);
    const eventsAfterFirst = t.host.store.lastSequence();
    const second = await t.host.threads.createThread(request);
    expect(second.replayed).toBe(true);
    expect(second.thread.id).toBe(first.thread.id);
    expect(second.delivery?.runId).toBe(first.delivery?.runId);
    // A replay writes nothing (later events come only from the run itself).
    expect(t.host.store.select("thread", "1 = 1")).toHaveLength(1);
    expect(t.host.store.count("run", "1 = 1")).toBe(1);
    await expect(t.host.threads.createThread({ ...request, prompt: "@@reply other" })).rejects.toThrowError(
      expect.objectContaining({ code: "conflict" }),
    );
    expect(t.host.store.lastSequence()).toBeGreaterThanOrEqual(eventsAfterFirst);
  });

  it("rebuilds projections from the event log to the same state", async () => {
    t = await startTestHost();
    const project = await t.host.projects.add(t.workspace);
    const { thread } = await t.host.threads.createThread({
      projectId: project.id,
      providerInstanceId: "scripted",
      prompt: "@@reply one",
      createdBy: "user",
      creationSource: "cli",
    });
    await t.host.threads.waitForRun({ threadId: thread.id, timeoutMs: 10_000 });
    await t.host.threads.send({
      threadId: thread.id,
      text: "@@reply two",
      mode: "auto",
      createdBy: "user",
      creationSource: "cli",
    });
    await t.host.threads.waitForRun({ threadId: thread.id, timeoutMs: 10_000 });
    const snapshot = () =>
      ["threads", "runs", "attempts", "items", "projects", "nodes"].map((table) =>
        sqliteStore(t!.host.store).db.prepare(`SELECT * FROM ${table} ORDER BY id`).all(),
      );
    // In one turn of the store's writers: the host's own work after the run (a transaction that
    // awaits) may not land between the snapshot and the rebuild, and a write beside it is refused.
    const [before, applied, last, after] = await t.host.store.writeAsync(() => [
      snapshot(),
      t!.host.store.rebuildProjections(),
      t!.host.store.lastSequence(),
      snapshot(),
    ]);
    expect(applied).toBe(last);
    expect(after).toEqual(before);
  });

  it("lets a test override any core service through the composition root", async () => {
    const fixed = { nowMs: () => Date.UTC(2030, 0, 1), nowIso: () => "2030-01-01T00:00:00.000Z" };
    t = await startTestHost({ overrides: (container) => container.register(TOKENS.Clock, { useValue: fixed }) });
    const project = await t.host.projects.add(t.workspace);
    expect(project.createdAt).toBe("2030-01-01T00:00:00.000Z");
  });

  it("hands the engine its in-transaction reactions when it is built: the delegation saga, router children, usage accounting, the results of tasks across environments, the stop's freeze of harness tools and workspace commits, with nothing resolved early", async () => {
    t = await startTestHost({ start: false });
    // A host that never started (a one-shot command) and never built DelegatedTaskService.
    expect(t.host.engine.reactionNames).toEqual([
      "delegation",
      "router-child-results",
      "usage",
      "remote-task-results",
      "foreign-task-outbox",
      "stop-freezes-harness-tools",
      "workspace-run-end",
    ]);
  });

  it("runs a change's commit actions last inside its transaction and settles them after the commit; a change that failed has none", async () => {
    t = await startTestHost({ start: false });
    const seen: string[] = [];
    const unsubscribe = t.host.engine.onEvents(() => seen.push("committed events heard"));
    const action = (name: string) => ({
      prepare: () => seen.push(`${name} prepared`),
      committed: () => seen.push(`${name} committed`),
      rolledBack: () => seen.push(`${name} rolled back`),
    });
    const project = await t.host.projects.add(t.workspace);
    seen.length = 0;
    await t.host.engine.apply(async (ctx) => {
      ctx.onCommit(action("a"));
      ctx.put("project", { ...(await ctx.require("project", project.id)), name: "renamed" });
      seen.push("change written");
    });
    expect(seen).toEqual(["change written", "a prepared", "committed events heard", "a committed"]);

    // A nested change's actions wait for the outermost commit; a failed change's never run.
    seen.length = 0;
    await expect(
      t.host.engine.apply(async (ctx) => {
        ctx.onCommit(action("outer"));
        // Nested, its transaction is a savepoint of this one; it commits, and the outer one then fails.
        // (Awaited: a nested change its caller leaves behind outlives the transaction and is refused.)
        await t!.host.engine.apply((inner) => inner.onCommit(action("inner")));
        throw new Error("the change fails");
      }),
    ).rejects.toThrow("the change fails");
    expect(seen).toEqual([]);

    // In a batch, only the changes that kept their savepoint act.
    const failures: number[] = [];
    await t.host.engine.applyEach(
      [
        (ctx) => ctx.onCommit(action("first")),
        (ctx) => {
          ctx.onCommit(action("second"));
          throw new Error("second fails");
        },
        async (ctx) => {
          ctx.onCommit(action("third"));
          ctx.put("project", { ...(await ctx.require("project", project.id)), name: "again" });
        },
      ],
      (_error, index) => failures.push(index),
    );
    expect(failures).toEqual([1]);
    expect(seen).toEqual([
      "first prepared",
      "third prepared",
      "committed events heard",
      "first committed",
      "third committed",
    ]);
    unsubscribe();
  });

  it("lets a test add or replace the engine's reactions, which run inside the transaction that ended the run", async () => {
    const seen: { runId: string; statusInTransaction: string | undefined }[] = [];
    const recorder: EngineReaction = {
      name: "recorder",
      onRunTerminal: async (ctx, run) => {
        seen.push({ runId: run.id, statusInTransaction: (await ctx.get("run", run.id))?.status });
      },
    };
    t = await startTestHost({
      overrides: (container) =>
        container.register(TOKENS.EngineReactions, { useFactory: (c) => [recorder, c.resolve(DelegationSaga)] }),
    });
    expect(t.host.engine.reactionNames).toEqual(["recorder", "delegation"]);
    const project = await t.host.projects.add(t.workspace);
    const { thread, delivery } = await t.host.threads.createThread({
      projectId: project.id,
      providerInstanceId: "scripted",
      prompt: "@@reply done",
      createdBy: "user",
      creationSource: "cli",
    });
    await t.host.threads.waitForRun({ threadId: thread.id, timeoutMs: 10_000 });
    expect(seen).toEqual([{ runId: delivery!.runId, statusInTransaction: "completed" }]);
  });

  it("registers every token of the composition root, and one provider registry behind both registry tokens", async () => {
    t = await startTestHost({ start: false });
    for (const [name, token] of Object.entries(TOKENS))
      expect(() => t!.host.container.resolve(token), name).not.toThrow();
    expect(t.host.container.resolve(TOKENS.ProviderCatalog)).toBe(t.host.container.resolve(TOKENS.ProviderRegistry));
  });

  it("keeps the database schema versioned and refuses a newer one", () => {
    const dir = mkdtempSync(join(tmpdir(), "switchyard-schema-"));
    try {
      const file = join(dir, "db.sqlite");
      new Store(file).close();
      const store = new Store(file);
      const versions = store.db.prepare("SELECT version FROM schema_migrations ORDER BY version").all();
      // Every known migration is applied once; versions may have gaps (branches reserve numbers).
      expect(versions).toEqual(MIGRATIONS.map((m) => ({ version: m.version })).sort((a, b) => a.version - b.version));
      expect(versions).toContainEqual({ version: 4 });
      expect(versions).toContainEqual({ version: 5 });
      store.db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'future', 'x')").run();
      store.close();
      expect(() => new Store(file)).toThrowError(/newer than this Switchyard knows/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("config file errors", () => {
  const cases: [string, string, RegExp][] = [
    ["not json", "{ providers: ", /line 1, column 3: not valid JSON: expected a property name in double quotes/],
    ["wrong type", JSON.stringify({ providers: [{ id: "a", driver: 7 }] }), /providers\[0\]\.driver: /],
    ["unknown field", JSON.stringify({ providers: [], colour: "blue" }), /\(root\): Unrecognized key.*colour/],
    ["bad id", JSON.stringify({ providers: [{ id: "Bad Id", driver: "x" }] }), /providers\[0\]\.id: must be lowercase/],
    [
      "duplicate id",
      JSON.stringify({
        providers: [
          { id: "a", driver: "x" },
          { id: "a", driver: "y" },
        ],
      }),
      /providers\[1\]\.id: duplicate provider id "a"/,
    ],
    ["bad port", JSON.stringify({ server: { port: 70000 } }), /server\.port: /],
    // The strictest MCP server key any harness accepts (Codex refuses a ".", Claude and Pi split tool names on "__").
    [
      "mcp server name with a dot",
      JSON.stringify({ server: { mcpServerName: "switchyard.dev" } }),
      /server\.mcpServerName: must be lowercase letters and digits.*no '\.'/,
    ],
    [
      "mcp server name with a double underscore",
      JSON.stringify({ server: { mcpServerName: "sy__tools" } }),
      /server\.mcpServerName: must be lowercase/,
    ],
    [
      "mcp server name starting with a digit",
      JSON.stringify({ server: { mcpServerName: "3code" } }),
      /server\.mcpServerName: must be lowercase/,
    ],
    [
      "mcp server name too long",
      JSON.stringify({ server: { mcpServerName: "a".repeat(33) } }),
      /server\.mcpServerName: must be at most 32 characters/,
    ],
    // The web UI's public base: thread pages are <webUrl>/threads/<id>, so no trailing slash or query.
    [
      "web url not http",
      JSON.stringify({ server: { webUrl: "ftp://host" } }),
      /server\.webUrl: .*not an http\(s\) URL/,
    ],
    [
      "web url with a trailing slash",
      JSON.stringify({ server: { webUrl: "https://h/" } }),
      /server\.webUrl: .*ends with a slash/,
    ],
    [
      "web url with a query",
      JSON.stringify({ server: { webUrl: "https://h/x?a=1" } }),
      /server\.webUrl: .*has a query/,
    ],
    [
      "web url not a url",
      JSON.stringify({ server: { webUrl: "switchyard" } }),
      /server\.webUrl: "switchyard" is not a URL/,
    ],
  ];
  it.each(cases)("names the file, the field and why: %s", (_name, content, pattern) => {
    const dir = mkdtempSync(join(tmpdir(), "switchyard-config-"));
    try {
      const file = join(dir, "config.json");
      writeFileSync(file, content);
      let error: unknown;
      try {
        loadConfig(file);
      } catch (caught) {
        error = caught;
      }
      expect(error).toMatchObject({ code: "config_invalid" });
      expect((error as Error).message).toContain(file);
      expect((error as Error).message).toMatch(pattern);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("accepts the MCP server keys old loadouts use", () => {
    for (const mcpServerName of ["switchyard", "t3-code", "t3_code", "a".repeat(32)]) {
      expect(parseConfig({ server: { mcpServerName } }, "config.json").server.mcpServerName).toBe(mcpServerName);
    }
  });

  it("uses the embedded defaults when there is no config file", () => {
    const config = loadConfig(join(tmpdir(), "no-such-dir", "config.json"));
    expect(config).toMatchObject({
      providers: [],
      plugins: [],
      server: { port: 7410, mcpServerName: "switchyard", maxWaitMs: 50_000 },
    });
  });
});
