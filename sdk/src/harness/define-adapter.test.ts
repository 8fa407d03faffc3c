import { describe, expect, it } from "vitest";
import type { ProbeOptions, ProviderStatus } from "@switchyard/spec";
import { defineAdapter, type StartableSession } from "./define-adapter.js";

describe("defineAdapter", () => {
  const status: ProviderStatus = { installed: true, executable: true, authenticated: true, models: [] };
  const instance = { id: "kit", driver: "kit", displayName: "Kit", homePath: null, environment: {}, customModels: [] };

  it("passes the probe depth on, closes a session whose start failed, tracks live ones, and disposes them all", async () => {
    const closed: string[] = [];
    const depths: string[] = [];
    let fail = true;
    const adapter = defineAdapter<StartableSession & { name: string }>({
      instance,
      driverKind: "kit",
      capabilities: { turns: { interrupt: true } },
      probe: async (options) => {
        depths.push(options?.depth ?? "full");
        return status;
      },
      createSession: (input, onClosed) => ({
        name: input.threadId,
        resumeCursor: null,
        start: async () => {
          if (fail) throw new Error("harness would not start");
        },
        startTurn: async () => ({}),
        close: async () => {
          closed.push(input.threadId);
          onClosed();
        },
      }),
    });
    expect(adapter.specificationVersion).toBe("v1");
    await adapter.probe({ depth: "inspect" });
    await adapter.probe();
    expect(depths).toEqual(["inspect", "full"]);
    expect(adapter.capabilities().turns.interrupt).toBe(true);
    expect(adapter.capabilities().turns.activeSteering).toBe(false);
    const input = {
      threadId: "a",
      providerSessionId: "p",
      cwd: "/",
      model: null,
      runtimeMode: "full-access",
      interactionMode: "default",
      resumeCursor: null,
      mcp: null,
      emit: () => undefined,
    } as const;
    await expect(adapter.openSession(input)).rejects.toThrow("harness would not start");
    expect(closed).toEqual(["a"]);
    expect(adapter.sessions.size).toBe(0);
    fail = false;
    await adapter.openSession({ ...input, threadId: "b" });
    await adapter.openSession({ ...input, threadId: "c" });
    expect(adapter.sessions.size).toBe(2);
    await adapter.dispose!();
    expect(closed.sort()).toEqual(["a", "b", "c"]);
    expect(adapter.sessions.size).toBe(0);
  });
});

describe("defineAdapter's probe", () => {
  it("hands the host's probe depth to the provider, so an inspect probe can stay side-effect free", async () => {
    const seen: (ProbeOptions | undefined)[] = [];
    const adapter = defineAdapter({
      instance: { id: "kit", driver: "kit", displayName: "Kit", homePath: null, environment: {}, customModels: [] },
      driverKind: "kit",
      capabilities: {},
      probe: async (options?: ProbeOptions): Promise<ProviderStatus> => {
        seen.push(options);
        return {
          installed: true,
          executable: true,
          authenticated: options?.depth === "inspect" ? "unknown" : true,
          models: [],
        };
      },
      createSession: () => {
        throw new Error("no sessions here");
      },
    });
    expect((await adapter.probe({ depth: "inspect" })).authenticated).toBe("unknown");
    expect((await adapter.probe({ depth: "full" })).authenticated).toBe(true);
    await adapter.probe();
    expect(seen).toEqual([{ depth: "inspect" }, { depth: "full" }, undefined]);
  });
});
