import { describe, expect, it } from "vitest";
import type { ProbeOptions, ProviderStatus } from "@switchyard/spec";
import { defineAdapter } from "../src/index.js";

describe("defineAdapter's probe", () => {
  it("hands the host's probe depth to the provider, so an inspect probe can stay side-effect free", async () => {
    const seen: (ProbeOptions | undefined)[] = [];
    const adapter = defineAdapter({
      instance: { id: "kit", driver: "kit", displayName: "Kit", homePath: null, environment: {}, customModels: [] },
      driverKind: "kit",
      capabilities: {},
      probe: async (options?: ProbeOptions): Promise<ProviderStatus> => {
        seen.push(options);
        return { installed: true, executable: true, authenticated: options?.depth === "inspect" ? "unknown" : true, models: [] };
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
