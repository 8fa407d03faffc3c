import { describe, expect, it } from "vitest";
import { decodeCapabilities, type OpenSessionInput, type ProviderSession } from "@switchyard/core/spec";
import { FULL_SCRIPTED_CAPABILITIES } from "../src/scripted-provider/scripted-plugin.js";
import { ScriptedAdapter } from "../src/scripted-provider/index.js";

const OPTIONAL_METHODS = [
  "steerTurn",
  "interruptTurn",
  "forkThread",
  "readSnapshot",
  "respondToRuntimeRequest",
  "updateMcpGrant",
] as const;

function open(declaration: unknown): Promise<ProviderSession> {
  const adapter = new ScriptedAdapter("surface", {}, decodeCapabilities(declaration).capabilities);
  const input: OpenSessionInput = {
    threadId: "thread:surface",
    providerSessionId: "psess:surface",
    cwd: process.cwd(),
    model: null,
    runtimeMode: "approval-required",
    interactionMode: "default",
    resumeCursor: null,
    mcp: null,
    emit: () => undefined,
  };
  return adapter.openSession(input);
}

describe("scripted provider: an optional method exists only when its capability is declared", () => {
  it("offers none of them when it declares nothing", async () => {
    const session = await open({ turns: { terminalStatusQuality: "strong" } });
    for (const method of OPTIONAL_METHODS) expect(session[method], method).toBeUndefined();
    expect(typeof session.startTurn).toBe("function");
    await session.close();
  });

  it("offers each one its declaration names, and only those", async () => {
    const session = await open({
      turns: { interrupt: true, terminalStatusQuality: "strong" },
      runtimeRequests: { userInputQuestions: true },
    });
    expect(OPTIONAL_METHODS.filter((method) => session[method] !== undefined)).toEqual([
      "interruptTurn",
      "respondToRuntimeRequest",
    ]);
    // A declared group still refuses the part it does not cover: only questions, no approvals.
    await expect(
      session.respondToRuntimeRequest!("none", { kind: "approval", decision: "accept" }),
    ).rejects.toMatchObject({ code: "unsupported_capability" });
    await session.close();
  });

  it("offers all of them with the full declaration", async () => {
    const session = await open(FULL_SCRIPTED_CAPABILITIES);
    for (const method of OPTIONAL_METHODS) expect(typeof session[method], method).toBe("function");
    expect(session.resumeCursor).toMatch(/^scripted-thread-/);
    await session.close();
  });
});
