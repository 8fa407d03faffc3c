import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createSilentLogger,
  startServer,
  SwitchyardHost,
  type RunningServer,
  type TimelineItemRecord,
} from "@switchyard/core";
import { ScriptedModelServer } from "../model-server/index.js";
import { DEFAULT_DEMO_PAIR, DEMO_DRIVERS, parseDemoPair } from "./demo-pair.js";

/** Options of {@link runDemo}. */
export interface DemoOptions {
  /** Leave the server (and model server) running after the delegation and print their URLs. */
  readonly keep?: boolean;
  /** Where to print (default stdout). */
  readonly out?: { write(text: string): unknown };
  /** Which driver delegates to which, `<parent>:<child>` (default `codex:pi`). */
  readonly pair?: string;
  /**
   * With `keep`: called once the server is left running; the lines it returns are printed (the
   * CLI records the server in the home's server.json and returns a web UI sign-in link).
   */
  readonly onKeep?: (kept: {
    readonly home: string;
    readonly host: SwitchyardHost;
    readonly server: RunningServer;
  }) => readonly string[];
}

const CHILD_TASK =
  "Write a three-line poem about rail yards. @@reply Steel rails cross at dawn / one switch sends the work elsewhere / the answer comes back";

function line(item: TimelineItemRecord): string {
  const who =
    item.kind === "user_message"
      ? "user"
      : item.kind === "assistant_message"
        ? "assistant"
        : item.kind.replace("_", " ");
  const text = item.text.replace(/\s+/g, " ").trim();
  const detail = item.kind === "tool_call" ? ` → ${item.status}` : "";
  return `  [${who}] ${text.length > 160 ? `${text.slice(0, 157)}...` : text}${detail}`;
}

/**
 * `switchyard demo`: one command, no credentials. Starts a scripted model server and a
 * Switchyard server on a temporary home with two real harnesses (Codex and Pi by default, any
 * pair of Codex, Pi and Claude with `pair`), has the parent thread delegate to the child
 * through the MCP endpoint, and prints both transcripts and the lineage.
 */
export async function runDemo(options: DemoOptions = {}): Promise<void> {
  const out = options.out ?? process.stdout;
  const print = (text = "") => out.write(`${text}\n`);
  const pair = parseDemoPair(options.pair ?? DEFAULT_DEMO_PAIR);
  const parentName = DEMO_DRIVERS[pair.parent]!.displayName;
  const childName = DEMO_DRIVERS[pair.child]!.displayName;
  const model = await ScriptedModelServer.start();
  const parentHome = await DEMO_DRIVERS[pair.parent]!.home(model.url);
  const childHome = await DEMO_DRIVERS[pair.child]!.home(model.url);
  const home = mkdtempSync(join(tmpdir(), "switchyard-demo-"));
  const workspace = mkdtempSync(join(tmpdir(), "switchyard-demo-workspace-"));
  const host = await SwitchyardHost.create({
    home,
    logger: createSilentLogger(),
    config: {
      providers: [
        {
          id: pair.parent,
          driver: pair.parent,
          displayName: parentName,
          homePath: parentHome.home,
          environment: parentHome.env,
        },
        {
          id: pair.child,
          driver: pair.child,
          displayName: childName,
          homePath: childHome.home,
          environment: childHome.env,
        },
      ],
    },
  });
  // startServer starts the host once the MCP endpoint is wired.
  const server = await startServer(host, { port: 0 });
  const cleanup = async () => {
    await server.close();
    await host.stop();
    await parentHome.cleanup();
    await childHome.cleanup();
    await model.close();
    rmSync(home, { recursive: true, force: true });
    rmSync(workspace, { recursive: true, force: true });
  };
  try {
    for (const availability of await host.providers.availabilityAll({ refresh: true })) {
      if (!availability.available)
        throw new Error(`The demo needs ${availability.instanceId}: ${availability.reason ?? "unavailable"}`);
    }
    print(
      `Switchyard demo: a real ${parentName} thread delegates to a real ${childName} thread, offline (scripted model).`,
    );
    print(`  scripted model  ${model.url}`);
    print(`  MCP endpoint    ${server.mcpUrl}`);
    print();
    const project = await host.projects.add(workspace, "demo");
    const delegation = {
      task: CHILD_TASK,
      target: { providerInstanceId: pair.child },
      title: "Poem about rail yards",
      role: "general",
      mode: "wait",
      clientRequestId: "demo-1",
    };
    const prompt = `Ask ${childName} for a short poem and pass it on. @@tool delegate_task ${JSON.stringify(delegation)} @@then @@reply ${childName} wrote: {{output.summary}}`;
    const { thread } = await host.threads.createThread({
      projectId: project.id,
      providerInstanceId: pair.parent,
      title: `Ask ${childName} for a poem`,
      prompt,
      runtimeMode: "full-access",
      createdBy: "user",
      creationSource: "cli",
    });
    const waited = await host.threads.waitForRun({ threadId: thread.id, timeoutMs: 180_000 });
    if (waited.run?.status !== "completed")
      throw new Error(
        `The ${parentName} run ended ${waited.run?.status ?? "without a run"}: ${waited.run?.error?.message ?? ""}`,
      );
    const task = host.store.select("delegatedTask", "parent_thread_id = ?", [thread.id])[0];
    if (task === undefined) throw new Error(`${parentName} did not delegate (no task was created).`);
    const items = (threadId: string) => host.store.select("item", "thread_id = ?", [threadId], "ORDER BY position");
    print(`Parent thread (${pair.parent}): ${thread.title}`);
    for (const item of items(thread.id)) print(line(item));
    print();
    print(`Child thread (${pair.child}): ${task.title}`);
    for (const item of items(task.childThreadId)) print(line(item));
    print();
    print("Lineage:");
    print(`  ${pair.parent}  ${thread.title}  (run ${waited.run.status})`);
    print(
      `  └─ ${pair.child}  ${task.title}  (task ${task.id}: ${task.status}, result transfer ${task.resultContextTransferId ?? "none"})`,
    );
    print();
    if (options.keep) {
      for (const text of options.onKeep?.({ home, host, server }) ?? []) print(text);
      print(`The server keeps running: ${server.mcpUrl} (home ${home}). Press Ctrl-C to stop.`);
      await new Promise<void>((resolve) => {
        process.once("SIGINT", resolve);
        process.once("SIGTERM", resolve);
      });
    }
  } finally {
    await cleanup();
  }
}
