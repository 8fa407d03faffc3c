import { describe, expect, it } from "vitest";
import { sessionProfileInput } from "../../src/engine/session-profile.js";
import { NO_CAPABILITIES, decodeCapabilities, type ProviderCapabilities } from "../../src/spec/index.js";
import type { ThreadRecord } from "../../src/store/records.js";

const carrying: ProviderCapabilities = decodeCapabilities({
  sessions: { harnessHome: true, environment: true },
  tools: { rules: { allow: true, deny: true, ask: true, allowOnly: true }, extraMcpServers: true },
}).capabilities;

function thread(harness: ThreadRecord["harness"]): ThreadRecord {
  return {
    id: "thread-1",
    providerInstanceId: "beta",
    profile: { name: "reviewer", source: "config", file: "/home/config.json", version: "sha256:0" },
    harness,
  } as ThreadRecord;
}

const profiles = [
  {
    name: "reviewer",
    description: "Reviews",
    environment: { TOKEN: "value" },
    mcpServers: { probe: { type: "http" as const, url: "http://127.0.0.1:1/mcp" } },
  },
];

describe("a profiled thread's session settings", () => {
  it("carry the recorded rules and home, with environment values and servers read from the config", () => {
    const input = sessionProfileInput(
      thread({
        toolRules: { allow: [], deny: ["Bash"], ask: [], allowOnly: false },
        harnessHome: "/homes/reviewer",
        environmentNames: ["TOKEN"],
        mcpServerNames: ["probe"],
      }),
      carrying,
      profiles,
    );
    expect(input).toEqual({
      toolRules: { allow: [], deny: ["Bash"], ask: [], allowOnly: false },
      harnessHome: "/homes/reviewer",
      environment: { TOKEN: "value" },
      mcpServers: { probe: { type: "http", url: "http://127.0.0.1:1/mcp" } },
    });
    expect(sessionProfileInput(thread(undefined), NO_CAPABILITIES, profiles)).toEqual({});
  });

  it("open no session on a provider that cannot carry them (a thread moved to another)", () => {
    const denied = thread({
      toolRules: { allow: [], deny: ["Bash"], ask: [], allowOnly: false },
      harnessHome: null,
      environmentNames: [],
    });
    expect(() => sessionProfileInput(denied, NO_CAPABILITIES, profiles)).toThrow(
      expect.objectContaining({
        code: "unsupported_capability",
        details: expect.objectContaining({ capability: "tools.rules.deny" }),
      }),
    );
  });

  it("fail clearly when the config no longer sets a recorded variable", () => {
    const stale = thread({ toolRules: null, harnessHome: null, environmentNames: ["GONE"] });
    expect(() => sessionProfileInput(stale, carrying, profiles)).toThrow(
      expect.objectContaining({ code: "config_invalid", details: expect.objectContaining({ variable: "GONE" }) }),
    );
  });
});
