import { describe, expect, it } from "vitest";
import type { ManagedProcess } from "@switchyard/spec";
import { createSilentLogger } from "../../core/src/logging/logger.js";
import { ProcessRunner } from "../../core/src/plugin-host/process-runner.js";
import { JsonLinesChannel, JsonRpcPeer, JsonRpcRequestError } from "../src/index.js";

// The harness kit's channel and JSON-RPC peer against a real child process. The kit's pure
// parts are unit-tested next to their source (sdk/src/harness/*.test.ts).

const logger = createSilentLogger();
const runner = new ProcessRunner(logger, null);

/** A real child process running a small Node script. */
function node(script: string): ManagedProcess {
  return runner.spawn(process.execPath, ["-e", script], { cwd: process.cwd(), label: "kit-test" });
}

describe("JsonLinesChannel and JsonRpcPeer over a real process", () => {
  it("routes responses, notifications and the harness's own requests in order", async () => {
    const child = node(`
      const rl = require("node:readline").createInterface({ input: process.stdin });
      rl.on("line", (line) => {
        const m = JSON.parse(line);
        if (m.method === "sum") {
          process.stdout.write(JSON.stringify({ method: "progress", params: { n: 1 } }) + "\\n");
          process.stdout.write(JSON.stringify({ id: 99, method: "ask", params: { q: "ok?" } }) + "\\n");
          process.stdout.write(JSON.stringify({ id: m.id, result: m.params.a + m.params.b }) + "\\n");
        } else if (m.method === "fail") {
          process.stdout.write(JSON.stringify({ id: m.id, error: { code: -32600, message: "no such thing" } }) + "\\n");
        } else if (m.id === 99) {
          process.stdout.write(JSON.stringify({ method: "answered", params: m.result }) + "\\n");
        }
      });`);
    const seen: string[] = [];
    let peer!: JsonRpcPeer;
    const channel = new JsonLinesChannel(child, { label: "echo", logger, onMessage: (m) => peer.receive(m) });
    peer = new JsonRpcPeer(channel, {
      jsonrpcField: false,
      onNotification: (n) => seen.push(`${n.method}:${JSON.stringify(n.params)}`),
      onRequest: async (r) => ({ yes: (r.params as { q: string }).q }),
    });
    await expect(peer.request<number>("sum", { a: 2, b: 3 })).resolves.toBe(5);
    expect(seen[0]).toBe('progress:{"n":1}');
    const failure = await peer.request("fail").catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(JsonRpcRequestError);
    expect(failure).toMatchObject({ method: "fail", rpcCode: -32600, message: "no such thing" });
    await new Promise<void>((resolve, reject) => {
      const deadline = setTimeout(
        () => reject(new Error("the answer to the harness's request never came back")),
        5_000,
      );
      const poll = setInterval(() => {
        if (seen.some((line) => line.startsWith("answered:"))) {
          clearInterval(poll);
          clearTimeout(deadline);
          resolve();
        }
      }, 10);
    });
    expect(seen).toContain('answered:{"yes":"ok?"}');
    await channel.stop(500, 500);
    expect(channel.closed).toBe(true);
  });

  it("fails pending requests when the harness dies, with its stderr tail, and never throws EPIPE", async () => {
    const child = node(
      `process.stderr.write("CODEX_HOME points to /nowhere but that path does not exist\\n"); process.stdin.once("data", () => process.exit(3));`,
    );
    let peer!: JsonRpcPeer;
    const channel = new JsonLinesChannel(child, { label: "dying harness", logger, onMessage: (m) => peer.receive(m) });
    peer = new JsonRpcPeer(channel, {
      jsonrpcField: true,
      onNotification: () => undefined,
      onRequest: async () => null,
    });
    const error = await peer.request("anything").catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "session_closed" });
    expect((error as Error).message).toContain("dying harness exited (code 3");
    expect((error as Error).message).toContain("CODEX_HOME points to /nowhere");
    expect(() => channel.send({ late: true })).toThrow(/exited/);
    await expect(peer.request("after")).rejects.toMatchObject({ code: "session_closed" });
    peer.notify("ignored"); // a notification to a dead harness is dropped, not thrown
  });
});
