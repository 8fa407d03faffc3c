import { setTimeout as sleep } from "node:timers/promises";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultProviders, McpLab } from "../support/mcp-lab.js";
import { callTool, connectMcp, mustCall } from "../support/mcp-client.js";
import { scriptedInstance } from "../support/test-host.js";

/**
 * Contract fidelity of waits, ceilings, send policy, shell fields, model short lists and retry
 * keys (seed 000; seed 002 for peer threads), through the real MCP client over HTTP, the real
 * engine on SQLite and scripted providers.
 */

type Shell = { threadId: string; title: string; linkedPullRequest: unknown; blockedOnThreadWait: boolean; pendingBackgroundTasks: number };
type Send = { runId: string; messageId: string; delivery: string; asked: string; action: string; degraded: boolean; reason: string; replayed: boolean };
type Wait = { runId: string | null; status: string; summary: string | null; waitTimedOut: boolean };
type Provider = { providerInstanceId: string; models: { id: string; custom?: boolean; favorite?: boolean; legacy?: boolean; callerModel?: boolean }[]; omittedModels: number };

const numbered = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}-${i + 1}`);

describe("MCP contract surface: waits, ceilings, send policy, shell fields, model lists, retry keys", () => {
  let lab: McpLab;
  let gates = 0;
  const gate = (name: string) => `${name}-${++gates}`;

  beforeAll(async () => {
    lab = await McpLab.start({
      providers: (dirs) => [
        ...defaultProviders(dirs),
        // Interrupt but no restart with new input, and no native steer.
        scriptedInstance("stopper", {
          gateDir: dirs.gateDir,
          capabilities: { turns: { interrupt: true, terminalStatusQuality: "strong" }, tools: { mcp: { http: true } }, runtimeModes: ["approval-required", "auto-accept-edits", "full-access"] },
        }),
        // A short, curated list: every current model is listed.
        scriptedInstance("wide", {
          gateDir: dirs.gateDir,
          models: numbered("wide", 12),
          capabilities: { turns: { terminalStatusQuality: "strong" }, tools: { mcp: { http: true } }, models: { shortList: "all_current" } },
        }),
        // A long catalog: the first 8 current models in the user's order.
        scriptedInstance(
          "narrow",
          {
            gateDir: dirs.gateDir,
            models: numbered("narrow", 12),
            capabilities: { turns: { terminalStatusQuality: "strong" }, tools: { mcp: { http: true } }, runtimeModes: ["approval-required", "auto-accept-edits", "full-access"], models: { shortList: "first_n" } },
          },
          { customModels: ["narrow-custom"], favoriteModels: ["narrow-11", "narrow-3"] },
        ),
      ],
    });
  });
  afterAll(async () => lab.stop());

  const idleThread = (providerInstanceId: string, extra: { runtimeMode?: "approval-required" | "auto-accept-edits" | "full-access"; interactionMode?: "plan" | "default"; title?: string; prompt?: string; model?: string } = {}) =>
    lab.host.threads.createThread({ projectId: lab.projectId, providerInstanceId, createdBy: "user", creationSource: "cli", ...extra }).thread;

  /** A thread whose first turn is live at its provider, held at a gate. */
  const busyThread = async (providerInstanceId: string, script: string, extra: { runtimeMode?: "approval-required" | "auto-accept-edits" | "full-access"; model?: string } = {}) => {
    const thread = idleThread(providerInstanceId, { ...extra, prompt: script });
    await lab.waitForLiveTurn(thread.id);
    return thread;
  };

  it("lists every current model for an all_current provider, and the first 8 in the user's order (custom, favorites, provider) for the others", async () => {
    const client = await lab.client(["orchestration:read"]);
    const providers = async (caller: Client, search?: string) =>
      Object.fromEntries(
        (await mustCall<{ providers: Provider[] }>(caller, "orchestrator_capabilities", search === undefined ? {} : { search })).providers.map((p) => [p.providerInstanceId, p]),
      ) as Record<string, Provider>;
    const all = await providers(client);
    expect(all.wide!.models.map((m) => m.id)).toEqual(numbered("wide", 12));
    expect(all.wide!.omittedModels).toBe(0);
    // narrow: the custom model, the favorites in their configured order, then narrow's own order.
    expect(all.narrow!.models).toEqual([
      { id: "narrow-custom", custom: true },
      { id: "narrow-11", favorite: true },
      { id: "narrow-3", favorite: true },
      { id: "narrow-1" },
      { id: "narrow-2" },
      { id: "narrow-4" },
      { id: "narrow-5" },
      { id: "narrow-6" },
    ]);
    expect(all.narrow!.omittedModels).toBe(5);
    // A provider that declares nothing keeps the shorter rule.
    expect(all.beta!.models.map((m) => m.id)).toEqual(numbered("beta", 8));
    expect(all.beta!.omittedModels).toBe(4);
    const searched = await providers(client, "narrow-12");
    expect(searched.narrow!.models.map((m) => m.id).slice(-1)).toEqual(["narrow-12"]);
    expect(searched.narrow!.omittedModels).toBe(4);

    // The caller's own model is always listed, besides the first 8.
    const hold = gate("narrow-caller");
    const callerThread = await busyThread("narrow", `@@gate ${hold} @@reply ok`, { model: "narrow-9", runtimeMode: "full-access" });
    const agent = await lab.agent(callerThread.id);
    const own = await providers(agent);
    expect(own.narrow!.models.map((m) => m.id)).toEqual(["narrow-custom", "narrow-11", "narrow-3", "narrow-1", "narrow-2", "narrow-4", "narrow-5", "narrow-6", "narrow-9"]);
    expect(own.narrow!.models.find((m) => m.id === "narrow-9")).toEqual({ id: "narrow-9", callerModel: true });
    expect(own.narrow!.omittedModels).toBe(4);
    lab.release(hold);
  });

});
