import { describe, expect, it } from "vitest";
import { defineAdapter, type ProbeOptions, type ProviderStatus, type StartableSession } from "../src/index.js";

// The adapter shell hands the host's probe options to the provider: an `inspect` probe must not
// start the harness, which only the provider's probe can honour.
describe("defineAdapter probe", () => {
  it("passes the host's probe depth to the provider's probe", async () => {
    const seen: (ProbeOptions | undefined)[] = [];
    const adapter = defineAdapter<StartableSession>({
      instance: { id: "kit", driver: "kit", displayName: "Kit", homePath: null, environment: {}, customModels: [] },
      driverKind: "kit",
      capabilities: {},
      probe: async (options) => {
        seen.push(options);
        return { installed: true, executable: true, authenticated: true, models: [], message: `depth ${options?.depth ?? "none"}` } satisfies ProviderStatus;
      },
      createSession: () => {
        throw new Error("no sessions in this test");
      },
    });
    expect((await adapter.probe({ depth: "inspect" })).message).toBe("depth inspect");
    expect((await adapter.probe()).message).toBe("depth none");
    expect(seen).toEqual([{ depth: "inspect" }, undefined]);
  });
});
