import { parse as parseToml } from "smol-toml";
import { describe, expect, it } from "vitest";
import { HARNESS_CONNECTORS } from "../../src/connect/harness-catalog.js";
import type { EntrySpec } from "../../src/connect/harness-connector.js";
import {
  MalformedJsonError,
  parseJsoncDocument,
  removeJsoncProperty,
  setJsoncProperty,
} from "../../src/util/jsonc-edit.js";
import { MalformedTomlError, setTomlTables } from "../../src/connect/toml-table-edit.js";

const spec: EntrySpec = {
  serverName: "switchyard",
  url: "http://127.0.0.1:7410/mcp",
  toolTimeoutMs: 130_000,
  secretFile: "/home/u/.switchyard/connections/x.token",
  envVar: "SWITCHYARD_X_TOKEN",
  supportDir: "/home/u/.switchyard/connections/support",
};

/** A user's Claude Code `.mcp.json`-style file with comments, a trailing comma and another server, in tabs. */
const JSONC_FIXTURE = `{
\t// my servers
\t"mcpServers": {
\t\t"github": { "type": "http", "url": "https://example.invalid/mcp" }, // keep me
\t},
\t/* other settings */
\t"theme": "dark"
}
`;

const TOML_FIXTURE = `# Codex settings
model = "gpt-5" # the favourite

[mcp_servers.github]
url = "https://example.invalid/mcp"
# a comment inside github

# profiles follow
[profiles.fast]
model = "o4-mini"
notes = """
[mcp_servers.switchyard]
not a table: inside a multi-line string
"""
`;

describe("editing harness configs in place", () => {
  it("JSONC: sets the entry beside the user's servers, keeps comments and layout, re-applies to the same bytes, and removes back to the original", () => {
    const connector = HARNESS_CONNECTORS.claude;
    const once = connector.apply(JSONC_FIXTURE, spec);
    expect(once).toContain("// my servers");
    expect(once).toContain("// keep me");
    expect(once).toContain("/* other settings */");
    expect(once).toContain('\t\t"github": { "type": "http", "url": "https://example.invalid/mcp" },');
    const parsed = parseJsoncDocument(once) as { mcpServers: Record<string, unknown>; theme: string };
    expect(Object.keys(parsed.mcpServers)).toEqual(["github", "switchyard"]);
    expect(parsed.theme).toBe("dark");
    expect(parsed.mcpServers.switchyard).toEqual(connector.expected(spec));
    expect(connector.read(once, spec)).toEqual(connector.expected(spec));
    // The new entry is indented like its neighbours (tabs).
    expect(once).toMatch(/\n\t\t"switchyard": \{\n\t\t\t"type": "http"/);
    expect(connector.apply(once, spec)).toBe(once);
    expect(connector.remove(once, spec)).toBe(JSONC_FIXTURE);
  });

  it("JSONC: a changed entry is replaced in place; an empty or missing file gets a fresh object; the only entry removes to an empty map", () => {
    const connector = HARNESS_CONNECTORS.gemini;
    const first = connector.apply(null, spec);
    expect(JSON.parse(first)).toEqual({ mcpServers: { switchyard: connector.expected(spec) } });
    const moved = connector.apply(first, { ...spec, url: "http://127.0.0.1:9999/mcp" });
    expect(
      (JSON.parse(moved) as { mcpServers: { switchyard: { httpUrl: string } } }).mcpServers.switchyard.httpUrl,
    ).toBe("http://127.0.0.1:9999/mcp");
    expect(Object.keys((JSON.parse(moved) as { mcpServers: object }).mcpServers)).toEqual(["switchyard"]);
    expect(JSON.parse(connector.remove(moved, spec))).toEqual({ mcpServers: {} });
    expect(JSON.parse(connector.apply("{}\n", spec))).toEqual({ mcpServers: { switchyard: connector.expected(spec) } });
  });

  it("JSONC: comments with characters outside the BMP (emoji) do not shift the edit", () => {
    const text = '{\n  // 🚀 launch servers\n  "mcpServers": {} /* ✨ */\n}\n';
    const edited = HARNESS_CONNECTORS.cursor.apply(text, spec);
    expect(edited).toContain("// 🚀 launch servers");
    expect(edited).toContain("/* ✨ */");
    expect(parseJsoncDocument(edited)).toEqual({
      mcpServers: { switchyard: HARNESS_CONNECTORS.cursor.expected(spec) },
    });
  });

  it("JSONC: removes a middle property with its comma and the file stays valid JSON", () => {
    const text = '{\n  "a": 1,\n  "b": { "x": [1, 2] },\n  "c": 3\n}\n';
    expect(removeJsoncProperty(text, ["b"])).toBe('{\n  "a": 1,\n  "c": 3\n}\n');
    expect(JSON.parse(removeJsoncProperty(text, ["c"]))).toEqual({ a: 1, b: { x: [1, 2] } });
    expect(JSON.parse(setJsoncProperty(text, ["d", "e"], true))).toEqual({
      a: 1,
      b: { x: [1, 2] },
      c: 3,
      d: { e: true },
    });
  });

  it("JSONC: refuses a malformed file, saying where, and a servers key that is not an object", () => {
    expect(() => HARNESS_CONNECTORS.cursor.apply('{\n  "mcpServers": {\n    "a": 1,,\n  }\n}', spec)).toThrow(
      MalformedJsonError,
    );
    expect(() => HARNESS_CONNECTORS.cursor.apply('{ "mcpServers": { "a": 1 }', spec)).toThrow(/line 1/);
    expect(() => HARNESS_CONNECTORS.opencode.apply('{ "mcp": [] }', spec)).toThrow(/"mcp" is not an object/);
    expect(() => HARNESS_CONNECTORS.opencode.apply("[1]", spec)).toThrow(/not a JSON object/);
  });

  it("TOML: appends both Codex tables, keeps comments, other tables and multi-line strings, re-applies to the same bytes, removes to the original", () => {
    const connector = HARNESS_CONNECTORS.codex;
    const once = connector.apply(TOML_FIXTURE, spec);
    expect(once.startsWith(TOML_FIXTURE.trimEnd())).toBe(true);
    const parsed = parseToml(once) as {
      model: string;
      mcp_servers: Record<string, Record<string, unknown>>;
      profiles: { fast: { notes: string } };
    };
    expect(parsed.model).toBe("gpt-5");
    expect(parsed.profiles.fast.notes).toContain("not a table");
    expect(Object.keys(parsed.mcp_servers).sort()).toEqual(["github", "switchyard", "switchyard-direct"]);
    expect(parsed.mcp_servers.switchyard).toMatchObject({
      url: spec.url,
      bearer_token_env_var: spec.envVar,
      tool_timeout_sec: 160,
      disabled_tools: ["t3_thread_wait"],
    });
    expect(parsed.mcp_servers["switchyard-direct"]).toMatchObject({
      enabled_tools: ["t3_thread_wait"],
      omit_tools_from: ["code_mode", "deferred"],
    });
    // tool_timeout_sec is above the server's longest wait (maxWaitMs 50 s by default; the spec's 130 s is 2 × 50 + 30).
    expect(parsed.mcp_servers.switchyard!.tool_timeout_sec as number).toBeGreaterThan(spec.toolTimeoutMs / 1000);
    expect(connector.apply(once, spec)).toBe(once);
    expect(connector.remove(once, spec)).toBe(TOML_FIXTURE);
  });

  it("TOML: replaces the tables where they stand (the user's table after them stays after them)", () => {
    const connector = HARNESS_CONNECTORS.codex;
    const placed = connector.apply(TOML_FIXTURE, spec);
    const withAfter = `${placed}\n[tui]\nnotifications = true # mine\n`;
    const moved = connector.apply(withAfter, { ...spec, url: "http://127.0.0.1:9/mcp" });
    expect(moved.endsWith("[tui]\nnotifications = true # mine\n")).toBe(true);
    // One real table, plus the line inside the fixture's multi-line string, which is not a table.
    expect(moved.match(/\[mcp_servers\.switchyard\]/g)).toHaveLength(2);
    expect((parseToml(moved) as { mcp_servers: { switchyard: { url: string } } }).mcp_servers.switchyard.url).toBe(
      "http://127.0.0.1:9/mcp",
    );
  });

  it("TOML: refuses a malformed file and an entry defined inline, which it could not edit without rewriting the user's layout", () => {
    expect(() => HARNESS_CONNECTORS.codex.apply('model = "unterminated\n', spec)).toThrow(MalformedTomlError);
    expect(() =>
      HARNESS_CONNECTORS.codex.apply('[mcp_servers]\nswitchyard = { url = "http://x/mcp" }\n', spec),
    ).toThrow(/defined inline or with dotted keys/);
    expect(() =>
      setTomlTables('mcp_servers.switchyard.url = "http://x"\n', [
        { path: ["mcp_servers", "switchyard"], values: { url: "y" } },
      ]),
    ).toThrow(/defined inline/);
  });
});
