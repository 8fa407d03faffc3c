/**
 * The OpenCode plugin's pure parts, without a server: config merging and permissions per
 * runtime mode, the model catalog, the fork point, runtime-request mapping, JSONC.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ProviderInstanceDescriptor, ToolRules } from "@switchyard/sdk";
import { createAcpTestContext, createOpenCodeHome } from "@switchyard/testkit";
import {
  MCP_TOKEN_ENV,
  configuredModels,
  createOpenCodeAdapter,
  forkPoint,
  modelCatalog,
  parseJsonc,
  permissionForMode,
  permissionWithRules,
  platformPackageNames,
  readUserConfig,
  serverConfig,
  serverEnvironment,
  userConfigPath,
  type Message,
  type Part,
  type Provider,
} from "../src/index.js";
import {
  approvalRequestOf,
  permissionReplyOf,
  questionAnswersOf,
  userInputRequestOf,
} from "../src/opencode-requests.js";
import { toolCallStart, taskResultOf } from "../src/opencode-items.js";
import { OpenCodeTurn } from "../src/opencode-turn.js";
import { CAPACITY_RETRIES_BEFORE_LIMIT, limitOfRetry } from "../src/opencode-limits.js";
import { RuntimeRequestBook, type AdapterEvent } from "@switchyard/sdk";
import { grantFor, openCodeOptions } from "./opencode-lab.js";

const scratch = mkdtempSync(path.join(tmpdir(), "opencode-units-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const instance = (overrides: Partial<ProviderInstanceDescriptor> = {}): ProviderInstanceDescriptor => ({
  id: "oc",
  driver: "opencode",
  displayName: "OpenCode",
  homePath: null,
  environment: {},
  customModels: [],
  ...overrides,
});

describe("the server's config", () => {
  it("merges the user's config under Switchyard's entries: other MCP servers stay, the token is only named, the mode owns permission", () => {
    const user = {
      model: "anthropic/claude-sonnet-4-6",
      mcp: { docs: { type: "local", command: ["docs-mcp"] }, switchyard: { type: "remote", url: "http://elsewhere" } },
      permission: { bash: { "git *": "allow", "*": "deny" } },
      instructions: ["AGENTS.extra.md"],
      share: "auto",
    };
    const config = serverConfig(user, {
      runtimeMode: "approval-required",
      grant: grantFor("http://127.0.0.1:9/mcp", "sy_secret"),
    });
    expect(config).toMatchObject({
      model: "anthropic/claude-sonnet-4-6",
      autoupdate: false,
      share: "disabled",
      instructions: ["AGENTS.extra.md"],
      permission: { bash: "ask", edit: "ask", webfetch: "ask", websearch: "ask", "switchyard_*": "allow" },
    });
    expect((config["mcp"] as Record<string, unknown>)["docs"]).toEqual(user.mcp.docs);
    expect((config["mcp"] as Record<string, unknown>)["switchyard"]).toEqual({
      type: "remote",
      url: "http://127.0.0.1:9/mcp",
      enabled: true,
      oauth: false,
      timeout: 60_000,
      headers: { Authorization: `Bearer {env:${MCP_TOKEN_ENV}}` },
    });
    expect(JSON.stringify(config)).not.toContain("sy_secret");
  });

  it("maps each runtime mode onto OpenCode permissions", () => {
    expect(permissionForMode("full-access", "switchyard")).toBe("allow");
    expect(permissionForMode("auto-accept-edits", "sy")).toEqual({
      bash: "ask",
      edit: "allow",
      webfetch: "ask",
      websearch: "ask",
      "sy_*": "allow",
    });
    expect(permissionForMode("approval-required", null)).toEqual({
      bash: "ask",
      edit: "ask",
      webfetch: "ask",
      websearch: "ask",
    });
  });

  it("lays a profile's tool rules over the mode's permission so OpenCode's last matching rule is the strictest", () => {
    const rules = (over: Partial<ToolRules>): ToolRules => ({
      allow: [],
      deny: [],
      ask: [],
      allowOnly: false,
      ...over,
    });
    // Claude's spellings map onto OpenCode's permissions; `:*` is OpenCode's `*`.
    expect(
      permissionWithRules(
        permissionForMode("approval-required", "switchyard"),
        rules({ deny: ["Bash(git push:*)", "Write"], allow: ["bash(git status*)", "WebFetch"] }),
      ),
    ).toEqual({
      bash: { "*": "ask", "git status*": "allow", "git push*": "deny" },
      edit: "deny",
      webfetch: "allow",
      websearch: "ask",
      "switchyard_*": "allow",
    });
    // Full access is written tool by tool: a `*` key would come after, and beat, the shell's deny.
    const full = permissionWithRules("allow", rules({ deny: ["bash"], ask: ["edit"] })) as Record<string, unknown>;
    expect(full["*"]).toBeUndefined();
    expect(full).toMatchObject({
      bash: "deny",
      edit: "ask",
      read: "allow",
      task: "allow",
      external_directory: "allow",
    });
    // A wildcard rule is each tool's own; kept as a key only where it overrides nothing stricter.
    expect(permissionWithRules("allow", rules({ deny: ["*"], allow: ["read"] }))).toMatchObject({
      read: "deny",
      bash: "deny",
      "*": "deny",
    });
    const wideAllow = permissionWithRules(
      permissionForMode("approval-required", null),
      rules({ allow: ["*"], deny: ["bash"] }),
    ) as Record<string, unknown>;
    expect(wideAllow).toMatchObject({ bash: "deny", edit: "allow", read: "allow" });
    expect(wideAllow["*"]).toBeUndefined();
    expect(permissionWithRules("allow", rules({ allow: ["*"] }))).toMatchObject({ "*": "allow" });
    // allowOnly: every OpenCode tool off but the named ones; MCP servers' tools keep the mode's answer.
    const only = permissionWithRules(
      permissionForMode("approval-required", "switchyard"),
      rules({ allow: ["read", "bash(ls*)"], ask: ["edit"], allowOnly: true }),
    ) as Record<string, unknown>;
    expect(only).toMatchObject({
      read: "allow",
      bash: { "*": "deny", "ls*": "allow" },
      edit: "ask",
      webfetch: "deny",
      task: "deny",
      "switchyard_*": "allow",
    });
    expect(only["*"]).toBeUndefined();
    expect(permissionWithRules("allow", null)).toBe("allow");
  });

  it("puts a profile's rules and extra MCP servers into the session's config, Switchyard's server winning its name", () => {
    const config = serverConfig(
      { mcp: { docs: { type: "local", command: ["docs-mcp"] } } },
      {
        runtimeMode: "full-access",
        grant: grantFor("http://127.0.0.1:9/mcp", "sy_secret"),
        toolRules: { allow: [], deny: ["bash"], ask: [], allowOnly: false },
        mcpServers: {
          tracker: { type: "http", url: "http://127.0.0.1:7/mcp", headers: { Authorization: "Bearer t" } },
          lint: { type: "stdio", command: "lint-mcp", args: ["--strict"], env: { LINT: "1" } },
          switchyard: { type: "http", url: "http://127.0.0.1:8/impostor" },
        },
      },
    );
    expect(config["permission"]).toMatchObject({ bash: "deny", edit: "allow" });
    const mcp = config["mcp"] as Record<string, Record<string, unknown>>;
    expect(mcp["docs"]).toEqual({ type: "local", command: ["docs-mcp"] });
    expect(mcp["tracker"]).toEqual({
      type: "remote",
      url: "http://127.0.0.1:7/mcp",
      enabled: true,
      oauth: false,
      headers: { Authorization: "Bearer t" },
    });
    expect(mcp["lint"]).toEqual({
      type: "local",
      command: ["lint-mcp", "--strict"],
      enabled: true,
      environment: { LINT: "1" },
    });
    expect(mcp["switchyard"]?.["url"]).toBe("http://127.0.0.1:9/mcp");
  });

  it("reads opencode.json or opencode.jsonc from the home, makes {file:} references absolute, and names a broken file", async () => {
    const home = path.join(scratch, "home");
    const options = await openCodeOptions();
    expect(userConfigPath(options, instance({ homePath: home }), {})).toBe(path.join(home, "opencode.json"));
    expect(userConfigPath(options, instance(), { XDG_CONFIG_HOME: "/x" })).toBe("/x/opencode/opencode.json");
    expect(userConfigPath(await openCodeOptions({ configFile: "/c.json" }), instance({ homePath: home }), {})).toBe(
      "/c.json",
    );
    // A profile's harness home is the session's whole config.
    expect(
      userConfigPath(await openCodeOptions({ configFile: "/c.json" }), instance({ homePath: home }), {}, "/profile"),
    ).toBe("/profile/opencode.json");
    expect(await readUserConfig(path.join(home, "opencode.json"))).toEqual({ config: {}, path: null });

    const jsoncDir = path.join(scratch, "jsonc");
    rmSync(jsoncDir, { recursive: true, force: true });
    mkdirSync(jsoncDir, { recursive: true });
    writeFileSync(
      path.join(jsoncDir, "opencode.jsonc"),
      '{\n  // my keys\n  "provider": { "x": { "options": { "apiKey": "{file:./key.txt}" } } }, /* trailing */\n}\n',
    );
    const read = await readUserConfig(path.join(jsoncDir, "opencode.json"));
    expect(read.path).toBe(path.join(jsoncDir, "opencode.jsonc"));
    expect(read.config).toEqual({
      provider: { x: { options: { apiKey: `{file:${path.join(jsoncDir, "key.txt")}}` } } },
    });

    writeFileSync(path.join(scratch, "broken.json"), '{ "model": ');
    await expect(readUserConfig(path.join(scratch, "broken.json"))).rejects.toMatchObject({
      code: "config_invalid",
      message: expect.stringContaining("broken.json"),
    });
  });

  it("builds the environment without Switchyard's own variables and with the adapter's values last", () => {
    const env = serverEnvironment(
      instance({ environment: { ANTHROPIC_API_KEY: "k", XDG_DATA_HOME: "/instance-data", SWITCHYARD_SECRET: "no" } }),
      { XDG_DATA_HOME: "/ours", [MCP_TOKEN_ENV]: "sy_t" },
      {
        PATH: "/bin",
        SWITCHYARD_HOME: "/h",
        OPENCODE_CONFIG_CONTENT: "{}",
        OPENCODE_CONFIG: "/user.json",
        HOME: "/home/u",
      },
    );
    expect(env).toEqual({
      PATH: "/bin",
      HOME: "/home/u",
      ANTHROPIC_API_KEY: "k",
      XDG_DATA_HOME: "/ours",
      OPENCODE_DISABLE_AUTOUPDATE: "1",
      [MCP_TOKEN_ENV]: "sy_t",
    });
  });

  it("parses JSONC: comments outside strings, trailing commas, and // inside strings kept", () => {
    expect(parseJsonc('{ "url": "http://x//y", /* c */ "a": [1, 2, // two\n ], }')).toEqual({
      url: "http://x//y",
      a: [1, 2],
    });
    expect(() => parseJsonc("{ nope }")).toThrow();
  });
});

describe("models, forks and requests", () => {
  const provider = (id: string, models: Record<string, { name: string; status?: string }>): Provider =>
    ({
      id,
      name: id.toUpperCase(),
      models: Object.fromEntries(Object.entries(models).map(([key, model]) => [key, { id: key, ...model }])),
    }) as unknown as Provider;

  it("lists every usable model, the configured default first, deprecated ones as legacy, custom models after the default", () => {
    const models = modelCatalog(
      [
        provider("zen", { free: { name: "Free", status: "active" } }),
        provider("anthropic", {
          old: { name: "Old", status: "deprecated" },
          sonnet: { name: "Sonnet", status: "active" },
        }),
      ],
      "anthropic/sonnet",
      ["local/llama", "zen/free"],
    );
    expect(models.map((model) => model.id)).toEqual(["anthropic/sonnet", "local/llama", "zen/free", "anthropic/old"]);
    expect(models[0]).toEqual({
      id: "anthropic/sonnet",
      displayName: "Sonnet (ANTHROPIC)",
      isDefault: true,
      source: "harness_catalog",
    });
    expect(models[3]).toMatchObject({ legacy: true });
  });

  it("says which models the user's opencode.json names and which are OpenCode's catalog", () => {
    const models = modelCatalog(
      [provider("local", { qwen: { name: "Qwen" } }), provider("anthropic", { sonnet: { name: "Sonnet" } })],
      "local/qwen",
      [],
      new Set(["local/qwen"]),
    );
    expect(models.map((model) => [model.id, model.source])).toEqual([
      ["local/qwen", "harness_config"],
      ["anthropic/sonnet", "harness_catalog"],
    ]);
  });

  it("lists a model's variants as its efforts (what the prompt's variant takes)", () => {
    const withVariants = { ...provider("openai", { gpt: { name: "GPT" } }) } as unknown as {
      models: Record<string, Record<string, unknown>>;
    };
    withVariants.models["gpt"]!["variants"] = { low: { reasoningEffort: "low" }, high: { reasoningEffort: "high" } };
    const [gpt] = modelCatalog(
      [withVariants as unknown as Provider, provider("zen", { free: { name: "Free" } })],
      null,
      [],
    );
    expect(gpt).toMatchObject({ id: "openai/gpt", efforts: ["low", "high"] });
    expect(modelCatalog([provider("zen", { free: { name: "Free" } })], null, [])[0]!.efforts).toBeUndefined();
  });

  it("cuts a fork at the first prompt of a later host turn, across steers and OpenCode's own user messages", () => {
    const user = (id: string, turnId: string | null): { info: Message; parts: Part[] } => ({
      info: { id, role: "user" } as Message,
      parts: [
        {
          id: `p-${id}`,
          type: "text",
          text: id,
          ...(turnId !== null ? { metadata: { switchyardTurnId: turnId } } : {}),
        } as Part,
      ],
    });
    const assistant = (id: string): { info: Message; parts: Part[] } => ({
      info: { id, role: "assistant" } as Message,
      parts: [],
    });
    const messages = [
      user("u1", "t1"),
      assistant("a1"),
      user("u1b", "t1"),
      assistant("a1b"),
      user("u-compaction", null),
      user("u2", "t2"),
      assistant("a2"),
      user("u3", "t3"),
    ];
    expect(forkPoint(messages, "t1")).toBe("u2");
    expect(forkPoint(messages, "t2")).toBe("u3");
    expect(forkPoint(messages, "t3")).toBeUndefined();
    expect(() => forkPoint(messages, "t9")).toThrow(expect.objectContaining({ code: "not_found" }));
  });

  it("maps permissions and questions both ways", () => {
    const request = {
      id: "per_1",
      sessionID: "s",
      permission: "bash",
      patterns: ["rm x"],
      metadata: { command: "rm x" },
      always: ["rm *"],
    };
    expect(approvalRequestOf(request, ["switchyard"])).toMatchObject({
      kind: "approval",
      approvalKind: "command",
      title: "rm x",
    });
    expect(
      approvalRequestOf({ ...request, permission: "switchyard_delegate_task", metadata: {} }, ["switchyard"]),
    ).toMatchObject({ approvalKind: "permission", title: "switchyard/delegate_task" });
    expect(approvalRequestOf({ ...request, permission: "edit", metadata: { diff: "+a" } }, [])).toMatchObject({
      approvalKind: "file-change",
      detail: "+a",
    });
    const answered = (decision: "accept" | "accept_for_session" | "decline" | "cancel") =>
      permissionReplyOf({ kind: "answered", response: { kind: "approval", decision } });
    expect(answered("accept")).toEqual({ reply: "once" });
    expect(answered("accept_for_session")).toEqual({ reply: "always" });
    expect(answered("decline")).toMatchObject({ reply: "reject", message: expect.stringContaining("declined") });
    expect(answered("cancel")).toEqual({ reply: "reject" });
    expect(permissionReplyOf({ kind: "cancelled", resolution: "cancelled", dismissed: true })).toEqual({
      reply: "reject",
    });

    const asked = userInputRequestOf({
      id: "que_1",
      sessionID: "s",
      questions: [
        { question: "A?", header: "A", options: [] },
        { question: "B?", header: "B", options: [{ label: "x", description: "" }], multiple: true },
      ],
    });
    expect(asked.questionIds).toEqual(["q1", "q2"]);
    expect(asked.request.questions[1]).toMatchObject({ id: "q2", multiSelect: true });
    expect(questionAnswersOf({ q2: ["x", "y"], q1: "free text" }, asked.questionIds)).toEqual([
      ["free text"],
      ["x", "y"],
    ]);
  });

  it("names tool calls for a timeline and reads a task's result", () => {
    expect(toolCallStart("c", "switchyard_delegate_task", {}, undefined, ["switchyard"])).toMatchObject({
      kind: "mcp",
      server: "switchyard",
      title: "switchyard/delegate_task",
    });
    expect(toolCallStart("c", "read", { filePath: "/a/b.ts" }, undefined, [])).toMatchObject({
      kind: "file_read",
      title: "/a/b.ts",
    });
    expect(toolCallStart("c", "todowrite", {}, "3 todos", [])).toMatchObject({ kind: "other", title: "3 todos" });
    expect(taskResultOf('<task id="ses_1" state="completed"> <task_result>\nthe answer\n</task_result> </task>')).toBe(
      "the answer",
    );
    expect(platformPackageNames("linux", "x64")[0]).toBe("opencode-linux-x64");
    expect(platformPackageNames("win32", "arm64")).toEqual(["opencode-windows-arm64"]);
    expect(platformPackageNames("darwin", "x64")).toEqual(["opencode-darwin-x64", "opencode-darwin-x64-baseline"]);
  });
});

describe("when an OpenCode turn is over", () => {
  const SESSION = "ses_main";
  const userPart = (messageID: string, turnId: string, prompt: number) =>
    ({
      type: "message.part.updated",
      properties: {
        part: {
          id: `prt_${messageID}`,
          sessionID: SESSION,
          messageID,
          type: "text",
          text: "x",
          metadata: { switchyardTurnId: turnId, switchyardPrompt: prompt },
        },
      },
    }) as never;
  const busy = { type: "session.status", properties: { sessionID: SESSION, status: { type: "busy" } } } as never;
  const idle = { type: "session.idle", properties: { sessionID: SESSION } } as never;
  const make = () => {
    const events: AdapterEvent[] = [];
    const emit = (event: AdapterEvent) => events.push(event);
    return { events, turn: new OpenCodeTurn("t1", emit, new RuntimeRequestBook(emit), SESSION, []) };
  };

  it("ignores an idle before its prompt was taken in, and ends at the idle after it and a busy", () => {
    const { turn, events } = make();
    turn.nextPrompt();
    expect(turn.apply(idle)).toBe(false); // the abort's second idle of the turn before
    expect(turn.apply(userPart("msg_1", "t1", 1))).toBe(false);
    expect(events).toEqual([{ type: "turn.started", turnId: "t1" }]);
    expect(turn.apply(idle)).toBe(false); // no busy since it was taken in
    turn.apply(busy);
    expect(turn.apply(idle)).toBe(true);
  });

  it("waits for a steer to be taken in; a refused steer leaves it where it was", () => {
    const { turn } = make();
    turn.nextPrompt();
    turn.apply(userPart("msg_1", "t1", 1));
    turn.apply(busy);
    const steer = turn.nextPrompt();
    expect(turn.apply(idle)).toBe(false); // the idle just before the steer landed
    turn.apply(userPart("msg_2", "t1", 2));
    turn.apply(busy);
    expect(turn.apply(idle)).toBe(true);
    expect(steer.switchyardPrompt).toBe(2);

    const refused = make();
    refused.turn.nextPrompt();
    refused.turn.apply(userPart("msg_1", "t1", 1));
    refused.turn.apply(busy);
    refused.turn.promptRefused(refused.turn.nextPrompt());
    expect(refused.turn.apply(idle)).toBe(true);
  });

  it("reads only the answers to its own prompts: a late aborted answer of the turn before does not fail or interrupt it", () => {
    const { turn } = make();
    turn.nextPrompt();
    turn.apply(userPart("msg_mine", "t1", 1));
    turn.apply({
      type: "message.updated",
      properties: {
        info: {
          id: "msg_old",
          sessionID: SESSION,
          role: "assistant",
          parentID: "msg_before",
          error: { name: "MessageAbortedError", data: { message: "Aborted" } },
        },
      },
    } as never);
    turn.apply(busy);
    turn.apply(idle);
    expect(turn.outcome()).toEqual({ status: "completed" });
  });
});

describe("the inspect probe", () => {
  it("finds the binary and reads the config's models without starting or writing anything", async () => {
    const home = await createOpenCodeHome({
      modelServerUrl: "http://127.0.0.1:9",
      config: { model: "fake/fake-model" },
    });
    const ctx = await createAcpTestContext();
    try {
      const adapter = createOpenCodeAdapter({
        instance: instance({ environment: home.env, customModels: ["local/llama"] }),
        options: await openCodeOptions({ configFile: home.configPath }),
        context: ctx.context,
      });
      // The host passes a depth on main's spec; this spec version's probe() takes none in its type.
      const probe = adapter.probe as (options?: {
        readonly depth?: "inspect" | "full";
      }) => ReturnType<typeof adapter.probe>;
      const status = await probe({ depth: "inspect" });
      expect(status).toMatchObject({ installed: true, executable: true, authenticated: "unknown", version: "1.18.33" });
      expect(status.models).toEqual([
        { id: "fake/fake-model", isDefault: true, source: "harness_config" },
        { id: "local/llama" },
      ]);
      expect(ctx.processes.spawned).toHaveLength(0);
      expect(existsSync(ctx.context.paths.dataDir)).toBe(false);
    } finally {
      await ctx.dispose();
      await home.cleanup();
    }
    expect(
      configuredModels({ model: "a/x", provider: { a: { models: { x: {}, y: {} } }, b: { models: { z: {} } } } }, [
        "b/z",
        "c/w",
      ]).map((m) => m.id),
    ).toEqual(["a/x", "a/y", "b/z", "c/w"]);
  });
});

describe("when OpenCode retries a request that hit a limit", () => {
  const SESSION = "ses_limits";
  const retry = (attempt: number, message: string) =>
    ({
      type: "session.status",
      properties: { sessionID: SESSION, status: { type: "retry", attempt, message, next: Date.now() + 30_000 } },
    }) as never;
  const warningsOf = (...statuses: never[]) => {
    const events: AdapterEvent[] = [];
    const emit = (event: AdapterEvent) => events.push(event);
    const turn = new OpenCodeTurn("t1", emit, new RuntimeRequestBook(emit), SESSION, []);
    for (const status of statuses) turn.apply(status);
    return events.filter((event) => event.type === "warning");
  };

  it("reports a used-up free tier or quota as a quota limit at once (seed 003's free_tier_limit)", () => {
    const [warning] = warningsOf(retry(1, "free_tier_limit: Free usage exceeded, add credits"));
    expect(warning).toMatchObject({ turnId: "t1", limit: { kind: "quota", code: "free_tier_limit" } });
    expect(limitOfRetry("You exceeded your current quota (insufficient_quota)", 1)).toEqual({
      kind: "quota",
      code: "insufficient_quota",
    });
  });

  it("reports a capacity limit only once OpenCode has retried it a few times, and an ordinary retry never", () => {
    const warnings = warningsOf(
      ...Array.from({ length: CAPACITY_RETRIES_BEFORE_LIMIT }, (_, index) => retry(index + 1, "Rate Limited")),
    );
    expect(warnings.map((warning) => (warning as { limit?: unknown }).limit)).toEqual([
      ...Array.from({ length: CAPACITY_RETRIES_BEFORE_LIMIT - 1 }, () => undefined),
      { kind: "capacity" },
    ]);
    expect(limitOfRetry("Provider is overloaded", CAPACITY_RETRIES_BEFORE_LIMIT)).toEqual({ kind: "capacity" });
    expect(limitOfRetry("fetch failed: ECONNRESET", 10)).toBeUndefined();
  });
});
