import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestHost, SCRIPTED_PROVIDER_PLUGIN_DIR, type TestHost } from "./support/test-host.js";

const NEGOTIATING_PLUGIN = fileURLToPath(new URL("./fixtures/plugins/negotiating", import.meta.url));

/** The fixture adapter's own count of `capabilities()` calls. */
function capabilityReads(t: TestHost, instanceId: string): number {
  return (t.host.providers.get(instanceId)!.adapter as unknown as { capabilityReads: number }).capabilityReads;
}

describe("provider capabilities: decoded by the registry, refined when the provider negotiates", () => {
  let t: TestHost;
  beforeAll(async () => {
    t = await startTestHost({
      // Not started: no background probe refines anything behind the test's back.
      start: false,
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR, NEGOTIATING_PLUGIN],
      providers: [
        { id: "opened", driver: "negotiating" },
        { id: "probed", driver: "negotiating" },
        {
          id: "minimal",
          driver: "scripted",
          options: { capabilities: { turns: { terminalStatusQuality: "strong" } } },
        },
      ],
    });
  });
  afterAll(async () => t.cleanup());

  it("decodes an adapter's record pessimistically: a malformed field and half a capability count as absent", () => {
    const capabilities = t.host.providers.capabilities("opened");
    expect(capabilities.turns.activeSteering).toBe(false);
    expect(capabilities.threads.forkFromTurn).toBe(false);
    expect(capabilities.turns.steeringByInterruptRestart).toBe(true);
  });

  it("answers from the decoded record: reading capabilities never calls the adapter", () => {
    const before = capabilityReads(t, "opened");
    for (let i = 0; i < 5; i += 1) t.host.providers.capabilities("opened");
    expect(capabilityReads(t, "opened")).toBe(before);
  });

  it("decodes again after a session opened (what the agent negotiated), for the registry, the session guard and the session record", async () => {
    const project = await t.host.projects.add(t.workspace, "main");
    const { thread } = await t.host.threads.createThread({
      projectId: project.id,
      providerInstanceId: "opened",
      createdBy: "user",
      creationSource: "cli",
    });
    const live = await t.host.sessions.ensure(thread.id);
    const capabilities = t.host.providers.capabilities("opened");
    expect(capabilities.turns.activeSteering).toBe(true);
    expect(capabilities.threads).toEqual({ readSnapshot: false, fork: true, forkFromTurn: true });
    expect(live.session.capabilities()).toEqual(capabilities);
    expect(t.host.store.get("providerSession", live.providerSessionId)!.capabilities.turns.activeSteering).toBe(true);
    // The other instance's adapter negotiated nothing yet.
    expect(t.host.providers.capabilities("probed").turns.activeSteering).toBe(false);
  });

  it("decodes again after a full probe, and the availability answer carries the new record", async () => {
    const availability = await t.host.providers.availability("probed", { refresh: true });
    expect(availability?.capabilities.turns.activeSteering).toBe(true);
    expect(t.host.providers.capabilities("probed").threads.fork).toBe(true);
  });

  it("refuses through the session guard, typed, a method the provider left out: undeclared, or declared and missing", async () => {
    const project = await t.host.projects.add(t.workspace, "guarded");
    const open = async (instance: string) => {
      const { thread } = await t.host.threads.createThread({
        projectId: project.id,
        providerInstanceId: instance,
        createdBy: "user",
        creationSource: "cli",
      });
      return (await t.host.sessions.ensure(thread.id)).session;
    };
    const minimal = await open("minimal");
    // The scripted session offers no steerTurn or forkThread at all: the guard answers for it.
    await expect(async () => minimal.steerTurn({ turnId: "none", text: "x" })).rejects.toMatchObject({
      code: "unsupported_capability",
      details: expect.objectContaining({ capability: "turns.activeSteering" }),
    });
    await expect(async () => minimal.forkThread({})).rejects.toMatchObject({ code: "unsupported_capability" });
    // The negotiating agent claims steering but its session has no steerTurn: still refused, never a crash.
    const negotiated = await open("opened");
    expect(negotiated.capabilities().turns.activeSteering).toBe(true);
    await expect(async () => negotiated.steerTurn({ turnId: "none", text: "x" })).rejects.toMatchObject({
      code: "unsupported_capability",
    });
  });
});
