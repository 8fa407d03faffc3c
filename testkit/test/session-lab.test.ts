/**
 * The session lab: the shared builder around a real adapter (the scripted provider), the inputs
 * and driver options it makes as the host does, and what /proc shows of a child this test starts.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { decodeCapabilities } from "@switchyard/spec";
import {
  FULL_SCRIPTED_CAPABILITIES,
  ScriptedAdapter,
  ScriptedModelServer,
  commandLineOf,
  createPiHome,
  createSessionLab,
  descendantCommandLines,
  environmentOf,
  environmentVariablesOf,
  isRunning,
  mcpGrantFor,
  openSessionInput,
  scriptedProviderPlugin,
  turnInput,
  validateDriverOptions,
} from "../src/index.js";

/** The scripted provider's adapter, remembering that it was disposed. */
class DisposableScriptedAdapter extends ScriptedAdapter {
  disposed = false;
  async dispose(): Promise<void> {
    this.disposed = true;
  }
}

describe("session lab", () => {
  it("reads the argv and environment of a process this test started, and of its children", async () => {
    // A child that starts a grandchild and waits; both carry markers the reads must find.
    const script =
      "require('node:child_process').spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)', 'grandchild-marker'], { stdio: 'ignore' }); process.stdout.write('ready\\n'); setTimeout(() => {}, 30000);";
    const child = spawn(process.execPath, ["-e", script, "child-marker"], {
      env: { ...process.env, SESSION_LAB_MARKER: "env-marker" },
      stdio: ["ignore", "pipe", "ignore"],
      detached: true,
    });
    try {
      await once(child.stdout, "data");
      expect(commandLineOf(child.pid!)).toContain("child-marker");
      expect(environmentOf(child.pid!)).toContain("SESSION_LAB_MARKER=env-marker");
      expect(environmentVariablesOf(child.pid!)["SESSION_LAB_MARKER"]).toBe("env-marker");
      expect(isRunning(child.pid!)).toBe(true);
      const lines = descendantCommandLines();
      expect(lines.some((line) => line.includes("child-marker"))).toBe(true);
      // The grandchild may take a moment to exist; the read is bounded by the attempts, not a clock.
      let found = false;
      for (let attempt = 0; attempt < 200 && !found; attempt += 1) {
        found = descendantCommandLines().some((line) => line.includes("grandchild-marker"));
        if (!found) await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(found).toBe(true);
    } finally {
      const exited = once(child, "exit");
      process.kill(-child.pid!, "SIGKILL");
      await exited;
    }
    expect(isRunning(child.pid!)).toBe(false);
  });

  it("makes a fresh turn input each call, and a grant shaped as the host's", () => {
    const first = turnInput("a");
    const second = turnInput("b", { model: "m" });
    expect(first.turnId).not.toBe(second.turnId);
    expect(second).toMatchObject({
      text: "b",
      model: "m",
      runtimeMode: "full-access",
      interactionMode: "default",
      instructions: null,
      restartOfTurnId: null,
    });
    expect(mcpGrantFor("http://127.0.0.1:1/mcp", "tok", { serverName: "t3-code" })).toMatchObject({
      serverName: "t3-code",
      url: "http://127.0.0.1:1/mcp",
      token: "tok",
    });
    const emit = () => undefined;
    const session = openSessionInput("/work", emit, { model: "m" });
    expect(session).toMatchObject({
      cwd: "/work",
      model: "m",
      runtimeMode: "full-access",
      interactionMode: "default",
      resumeCursor: null,
      mcp: null,
    });
    expect(session.emit).toBe(emit);
    const next = openSessionInput("/work", emit);
    expect([next.threadId, next.providerSessionId]).not.toEqual([session.threadId, session.providerSessionId]);
  });

  it("validates driver options with the plugin's own schema, and says what it refused", async () => {
    expect(await validateDriverOptions(scriptedProviderPlugin, "scripted", { models: ["m"] })).toEqual({
      models: ["m"],
    });
    await expect(validateDriverOptions(scriptedProviderPlugin, "scripted", { colour: true })).rejects.toThrow(/colour/);
    await expect(validateDriverOptions(scriptedProviderPlugin, "no-such-driver")).rejects.toThrow(/no-such-driver/);
  });

  it("opens sessions in the home, restarts the adapter, and disposes everything it holds", async () => {
    const server = await ScriptedModelServer.start();
    const home = await createPiHome({ modelServerUrl: server.url });
    const adapters: DisposableScriptedAdapter[] = [];
    const lab = await createSessionLab({
      home,
      standIn: server,
      createAdapter: () => {
        adapters.push(
          new DisposableScriptedAdapter("lab-test", {}, decodeCapabilities(FULL_SCRIPTED_CAPABILITIES).capabilities),
        );
        return adapters.at(-1)!;
      },
    });
    const first = await lab.open();
    expect(first.input).toMatchObject({ cwd: home.cwd, runtimeMode: "full-access", resumeCursor: null, mcp: null });
    const input = turnInput("@@reply from the lab");
    await first.session.startTurn(input);
    expect((await first.events.waitFor("turn.terminal", (event) => event.turnId === input.turnId)).status).toBe(
      "completed",
    );
    expect(first.events.textOf(input.turnId)).toBe("from the lab");

    const old = lab.adapter;
    expect(lab.restartAdapter()).toBe(lab.adapter);
    expect(lab.adapter).not.toBe(old);
    const second = await lab.open({ threadId: "thread-after-restart" });
    expect(second.input.threadId).toBe("thread-after-restart");
    expect(second.input.providerSessionId).not.toBe(first.input.providerSessionId);

    await lab.dispose();
    await expect(first.session.startTurn(turnInput("after dispose"))).rejects.toThrow(/closed/);
    await expect(second.session.startTurn(turnInput("after dispose"))).rejects.toThrow(/closed/);
    expect(adapters.map((adapter) => adapter.disposed)).toEqual([true, true]);
    expect(existsSync(lab.ctx.context.paths.home)).toBe(false);
    expect(existsSync(home.root)).toBe(false);
    await expect(fetch(server.url)).rejects.toThrow();
  });
});
