import { describe, expect, it } from "vitest";
import type { ProbeOptions, ProviderStatus } from "@switchyard/core/spec";
import { defineAdapter, type StartableSession } from "../src/index.js";

describe("defineAdapter probe", () => {
  it("hands the host's probe options (the depth) to the provider's probe", async () => {
    const seen: (ProbeOptions | undefined)[] = [];
    const adapter = defineAdapter<StartableSession>({
      instance: { id: "kit", driver: "kit", displayName: "Kit", homePath: null, environment: {}, customModels: [] },
      driverKind: "kit",
      capabilities: {},
      probe: async (options): Promise<ProviderStatus> => {
        seen.push(options);
        return { installed: true, executable: true, authenticated: options?.depth === "inspect" ? "unknown" : true, models: [] };
      },
      createSession: () => {
        throw new Error("no sessions in this test");
      },
    });
    expect((await adapter.probe({ depth: "inspect" })).authenticated).toBe("unknown");
    expect((await adapter.probe()).authenticated).toBe(true);
    expect(seen).toEqual([{ depth: "inspect" }, undefined]);
  });
});
