/**
 * Pi (`@earendil-works/pi-coding-agent`) against the scripted model server, in print mode and in
 * RPC mode (JSONL over stdio). Pi has no MCP client by design, so the tool round trip is proven
 * with its `bash` tool instead.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  ScriptedModelServer,
  createPiHome,
  killAllHarnessProcesses,
  resolveHarnessBinary,
  runHarness,
  spawnHarness,
} from "../src/index.js";
import type { HarnessBinary, HarnessProcess, PiApi, PiHome } from "../src/index.js";

type PiEvent = {
  type: string;
  id?: string;
  command?: string;
  success?: boolean;
  data?: Record<string, unknown>;
  [key: string]: unknown;
};

let server: ScriptedModelServer;
let pi: HarnessBinary;
const homes: PiHome[] = [];

beforeAll(async () => {
  pi = resolveHarnessBinary("pi");
  server = await ScriptedModelServer.start();
});
afterEach(async () => {
  await killAllHarnessProcesses();
  server.reset();
});
afterAll(async () => {
  await Promise.all(homes.map((home) => home.cleanup()));
  await server?.close();
});

async function piHome(api?: PiApi): Promise<PiHome> {
  const home = await createPiHome({ modelServerUrl: server.url, ...(api ? { api } : {}) });
  homes.push(home);
  return home;
}

/** Starts `pi --mode rpc` and waits until it answers `get_state` (Pi prints nothing when ready). */
async function startRpc(home: PiHome): Promise<HarnessProcess> {
  const proc = spawnHarness(pi, [...home.args, "--mode", "rpc", "--no-session"], {
    cwd: home.cwd,
    env: home.env,
    stdin: "pipe",
  });
  const ready = proc.waitForJsonLine<PiEvent>((e) => e.type === "response" && e.id === "ready");
  proc.writeLine({ id: "ready", type: "get_state" });
  await ready;
  return proc;
}

/** Collects every JSONL event from now on. */
function collect(proc: HarnessProcess): PiEvent[] {
  const events: PiEvent[] = [];
  proc.onLine((line) => {
    try {
      events.push(JSON.parse(line) as PiEvent);
    } catch {
      // not JSON
    }
  });
  return events;
}

describe("Pi against the scripted model server", () => {
  it("completes a text turn with pi -p", async () => {
    const home = await piHome();
    const exit = await runHarness(pi, [...home.args, "--no-session", "-p", "hello from the lab"], {
      cwd: home.cwd,
      env: home.env,
    });
    expect(exit.code).toBe(0);
    expect(exit.stdout.trim()).toBe("PONG");
    const request = await server.waitForRequest((r) => r.api === "openai-chat-completions");
    expect(request.userText).toBe("hello from the lab");
    expect(request.toolNames).toContain("bash");
  });

  it.each<PiApi>(["openai-completions", "openai-responses", "anthropic-messages"])(
    "round-trips a bash tool call over RPC (%s)",
    async (api) => {
      const home = await piHome(api);
      const proc = await startRpc(home);
      const events = collect(proc);
      const end = proc.waitForJsonLine<PiEvent>((e) => e.type === "agent_end");
      proc.writeLine({ id: "p1", type: "prompt", message: "@@shell echo hi-from-pi" });
      await end;

      expect(events.find((e) => e.id === "p1")).toMatchObject({ type: "response", command: "prompt", success: true });
      expect(events.find((e) => e.type === "tool_execution_end")).toMatchObject({
        toolName: "bash",
        isError: false,
        result: { content: [{ type: "text", text: expect.stringContaining("hi-from-pi") }] },
      });
      const last = proc.waitForJsonLine<PiEvent>((e) => e.id === "t1");
      proc.writeLine({ id: "t1", type: "get_last_assistant_text" });
      expect((await last).data).toEqual({ text: "DONE after bash: hi-from-pi" });

      const offered = await server.waitForRequest((r) => r.stepIndex === 0 && r.userText === "@@shell echo hi-from-pi");
      expect(offered.toolNames).toContain("bash");
      expect(offered.decision).toMatchObject({ kind: "tool_call", arguments: '{"command":"echo hi-from-pi"}' });
      const result = await server.waitForRequest((r) => r.toolResult?.toolName === "bash");
      expect(result.toolResult?.snippet).toBe("hi-from-pi");

      proc.closeStdin();
      expect((await proc.exited).code).toBe(0);
    },
  );

  it("delivers a steer while the model stream is held, after release", async () => {
    const home = await piHome();
    const proc = await startRpc(home);
    const events = collect(proc);
    const end = proc.waitForJsonLine<PiEvent>((e) => e.type === "agent_end");
    proc.writeLine({ id: "p1", type: "prompt", message: "first @@hold gate-1 @@reply first answer" });
    await server.waitForHold("gate-1");
    const steered = proc.waitForJsonLine<PiEvent>((e) => e.id === "s1");
    proc.writeLine({ id: "s1", type: "steer", message: "steered text @@echo" });
    expect(await steered).toMatchObject({ success: true });
    server.release("gate-1");
    await end;

    const replies = events
      .filter((e) => e.type === "message_end" && (e["message"] as { role?: string }).role === "assistant")
      .map((e) => (e["message"] as { content: Array<{ text?: string }> }).content.map((c) => c.text ?? "").join(""));
    expect(replies).toEqual(["first answer", "steered text"]);
    const second = await server.waitForRequest((r) => r.userText === "steered text @@echo");
    expect(second.decision).toMatchObject({ kind: "text", text: "steered text" });
  });

  it("aborts a held stream, and the server records the hang-up", async () => {
    const home = await piHome();
    const proc = await startRpc(home);
    const end = proc.waitForJsonLine<PiEvent>((e) => e.type === "agent_end");
    proc.writeLine({ id: "p1", type: "prompt", message: "wait @@hold never-released" });
    await server.waitForHold("never-released");
    proc.writeLine({ id: "a1", type: "abort" });
    const agentEnd = await end;
    const messages = agentEnd["messages"] as Array<{ role: string; stopReason?: string }>;
    expect(messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "aborted" });
    const aborted = await server.waitForRequest((r) => r.clientAborted);
    expect(aborted.heldOn).toBe("never-released");
  });
});
