import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { releaseGate, SCRIPTED_PROVIDER_PLUGIN_DIR } from "@switchyard/testkit/scripted-provider";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, runCli } from "../support/cli.js";
import { readRow, ServeProcess, waitForRow, writeHomeConfig, type ServeEndpoint } from "../support/serve-process.js";
import { until } from "../support/until.js";

/**
 * Starting and stopping work from the CLI against a real `serve` with a scripted provider:
 * `run` and `threads new [--wait]`, `threads stop|interrupt|resume|approve|decline`, projects
 * named by folder (or the working directory's), threads by id or link, and the exit codes.
 */
describe("switchyard run and threads new|stop|interrupt|approve|decline (real serve, scripted provider)", () => {
  let root: string;
  let home: string;
  let workspace: string;
  let elsewhere: string;
  let gateDir: string;
  let serve: ServeProcess;
  let endpoint: ServeEndpoint;
  const cli = (args: string[], options: { cwd?: string } = {}) =>
    runCli([...args, "--home", home], { timeoutMs: 120_000, cwd: options.cwd ?? workspace });
  /** A CLI command left running, read as it goes. */
  const background = (args: string[]) => {
    const child = execa(process.execPath, [CLI, ...args, "--home", home], {
      reject: false,
      cwd: workspace,
      stdin: "ignore",
      env: { NO_COLOR: "1" },
    });
    const output = { stdout: "", stderr: "" };
    child.stdout!.on("data", (chunk: Buffer) => (output.stdout += chunk.toString()));
    child.stderr!.on("data", (chunk: Buffer) => (output.stderr += chunk.toString()));
    return { child, output };
  };
  const runStatus = (threadId: string) =>
    readRow<{ status: string }>(home, "SELECT status FROM runs WHERE thread_id = ? ORDER BY ordinal DESC LIMIT 1", [
      threadId,
    ])?.status;
  const threadIdIn = (text: string) => /\((thread:[^)\s]+)\) on alpha/.exec(text)?.[1];
  /** The server's environment id (made when its first thread link is). */
  const environmentId = () =>
    readRow<{ value: string }>(home, "SELECT value FROM settings WHERE key = 'environment_id'")!.value;

  beforeAll(async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), "switchyard-threads-start-")));
    home = join(root, "home");
    workspace = join(root, "work");
    elsewhere = join(root, "elsewhere");
    gateDir = join(root, "gates");
    mkdirSync(join(workspace, "src"), { recursive: true });
    mkdirSync(elsewhere);
    writeHomeConfig(home, {
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
      providers: [{ id: "alpha", driver: "scripted", options: { gateDir, stateDir: join(root, "state") } }],
    });
    const added = await cli(["project", "add", workspace]);
    expect(added.code, added.stderr).toBe(0);
    serve = ServeProcess.start(home);
    endpoint = await serve.ready;
  }, 120_000);
  afterAll(async () => {
    await serve?.terminate();
    rmSync(root, { recursive: true, force: true });
  });

  it("run, from a folder inside the project: progress on stderr, the answer alone on stdout, exit 0; a failed run exits 4", async () => {
    const ran = await cli(["run", "@@plan read the code first @@reply the answer"], { cwd: join(workspace, "src") });
    expect(ran.code, ran.stderr).toBe(0);
    // (runCli's execa drops the final newline.)
    expect(ran.stdout).toBe("the answer");
    expect(ran.stderr).toContain("on alpha/");
    expect(ran.stderr).toContain(`switchyard-thread://v2/${environmentId()}/thread:`);
    expect(ran.stderr).toContain("proposed plan: read the code first");
    expect(ran.stderr).not.toMatch(/^the answer$/m);

    const failed = await cli(["run", "@@fail the disk is full", "--json"]);
    expect(failed.code).toBe(4);
    expect(JSON.parse(failed.stdout)).toMatchObject({
      status: "failed",
      error: { message: "the disk is full" },
      thread: { runtimeMode: "approval-required" },
    });
  }, 180_000);

  it("names the folder that is no project and the command that adds it, for --project and for the working directory", async () => {
    const outside = await cli(["run", "@@reply x"], { cwd: elsewhere });
    expect(outside.code).toBe(3);
    expect(outside.stderr).toContain(
      `${elsewhere} is in no Switchyard project. Add it with: switchyard project add ${elsewhere}`,
    );
    const named = await cli(["threads", "new", "@@reply x", "--project", elsewhere]);
    expect(named.code).toBe(3);
    expect(named.stderr).toContain(
      `${elsewhere} is not a Switchyard project. Add it with: switchyard project add ${elsewhere}`,
    );
    expect(readRow(home, "SELECT id FROM threads WHERE title = '@@reply x'")).toBeUndefined();

    // The project's folder works from anywhere, and the thread is printed; its link works wherever a thread is asked for.
    const created = await cli(
      ["threads", "new", "@@reply by folder", "--project", workspace, "--title", "by folder", "--mode", "full-access"],
      { cwd: elsewhere },
    );
    expect(created.code, created.stderr).toBe(0);
    const threadId = created.stdout.trim();
    expect(
      readRow(home, "SELECT title, json_extract(data, '$.runtimeMode') AS mode FROM threads WHERE id = ?", [threadId]),
    ).toEqual({ title: "by folder", mode: "full-access" });
    const link = `switchyard-thread://v2/${environmentId()}/${threadId}`;
    const waited = await cli(["threads", "wait", link, "--timeout", "60s"]);
    expect(waited.code, waited.stderr).toBe(0);
    expect(waited.stdout).toContain("by folder");
    const read = await cli(["threads", "read", link]);
    expect(read.stdout).toContain("[assistant] by folder");
    // The read carries the thread's page in the server's web UI, and that URL names the thread too.
    const { thread } = JSON.parse((await cli(["threads", "read", link, "--json"])).stdout) as {
      thread: { webUrl?: string };
    };
    expect(thread.webUrl).toBe(`${endpoint.url}/threads/${threadId}`);
    const byWebUrl = await cli(["threads", "read", thread.webUrl!]);
    expect(byWebUrl.code, byWebUrl.stderr).toBe(0);
    expect(byWebUrl.stdout).toContain("[assistant] by folder");
    const otherServer = await cli(["threads", "read", `http://127.0.0.2:9/threads/${threadId}`]);
    expect(otherServer.code).toBe(3);
    expect(otherServer.stderr).toContain("is a page of http://127.0.0.2:9, not of this server's web UI");

    const foreign = await cli(["threads", "read", `switchyard-thread://v2/env_0000000000000000/${threadId}`]);
    expect(foreign.code).toBe(3);
    expect(foreign.stderr).toContain("is a thread of environment env_0000000000000000, not of this server");
    const malformed = await cli(["threads", "stop", "switchyard-thread://v1/whatever"]);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain("is not a thread link");
  }, 180_000);

  it("threads new --wait follows a run through its approval: approve lets it go on, decline refuses it", async () => {
    const approving = background(["threads", "new", "@@approve deploy to staging", "--wait"]);
    await until(
      "the approval is shown",
      () =>
        approving.output.stderr.includes("needs approval: deploy to staging") &&
        approving.output.stderr.includes("answer with:"),
      { attempts: 2_400 },
    );
    const threadId = threadIdIn(approving.output.stderr)!;
    expect(approving.output.stderr).toContain(`switchyard threads approve ${threadId}`);
    const approved = await cli(["threads", "approve", `switchyard-thread://v2/${environmentId()}/${threadId}`]);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toContain("Approved: deploy to staging (command)");
    const done = await approving.child;
    expect(done.exitCode, approving.output.stderr).toBe(0);
    expect(approving.output.stdout).toBe("approved: deploy to staging\n");
    const again = await cli(["threads", "approve", threadId]);
    expect(again.code).toBe(3);
    expect(again.stderr).toContain(`Thread ${threadId} has no pending approval.`);

    // With --json, stdout is the result alone; the approval is still shown on stderr.
    const declining = background(["threads", "new", "@@approve drop the table", "--wait", "--json"]);
    await until(
      "the approval is shown",
      () =>
        declining.output.stderr.includes("needs approval: drop the table") &&
        declining.output.stderr.includes("answer with:"),
      { attempts: 2_400 },
    );
    const declinedThread = /switchyard threads approve (\S+)/.exec(declining.output.stderr)![1]!;
    const declined = await cli(["threads", "decline", declinedThread]);
    expect(declined.code, declined.stderr).toBe(0);
    expect(declined.stdout).toContain("Declined: drop the table");
    expect((await declining.child).exitCode).toBe(0);
    expect(JSON.parse(declining.output.stdout)).toMatchObject({
      thread: { threadId: declinedThread },
      status: "completed",
      summary: "declined: drop the table",
    });
  }, 240_000);

  it("interrupt ends the running turn (threads wait exits 5); stop holds the queued run until resume", async () => {
    const first = await cli(["threads", "new", "@@gate cli-interrupt @@reply late"]);
    const interrupted = first.stdout.trim();
    await waitForRow(home, "SELECT 1 FROM runs WHERE thread_id = ? AND status = 'running'", [interrupted]);
    const interrupt = await cli(["threads", "interrupt", interrupted]);
    expect(interrupt.code, interrupt.stderr).toBe(0);
    expect(interrupt.stdout).toMatch(/^Interrupting run run:/);
    const waited = await cli(["threads", "wait", interrupted, "--timeout", "60s"]);
    expect(waited.code).toBe(5);
    expect(waited.stdout).toContain("interrupted");
    expect((await cli(["threads", "interrupt", interrupted])).stdout).toContain(
      `${interrupted} has no running turn to interrupt.`,
    );

    const second = await cli(["threads", "new", "@@gate cli-stop @@reply late", "--json"]);
    const { thread, runId } = JSON.parse(second.stdout) as {
      thread: { threadId: string; link: string };
      runId: string;
    };
    await waitForRow(home, "SELECT 1 FROM runs WHERE id = ? AND status = 'running'", [runId]);
    const queued = await cli([
      "threads",
      "send",
      thread.threadId,
      "@@reply after the stop",
      "--mode",
      "queue",
      "--json",
    ]);
    const queuedRun = (JSON.parse(queued.stdout) as { runId: string }).runId;
    const stopped = await cli(["threads", "stop", thread.link, "--json"]);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(JSON.parse(stopped.stdout)).toMatchObject({ interruptedRunId: runId, heldRunIds: [queuedRun] });
    expect((await cli(["threads", "wait", thread.threadId, "--run", runId, "--timeout", "60s"])).code).toBe(5);
    expect(runStatus(thread.threadId)).toBe("queued");
    const resumed = await cli(["threads", "resume", thread.threadId]);
    expect(resumed.stdout).toContain(`${queuedRun} start again`);
    const after = await cli(["threads", "wait", thread.threadId, "--run", queuedRun, "--timeout", "60s"]);
    expect(after.code, after.stderr).toBe(0);
    expect(after.stdout).toContain("after the stop");
  }, 240_000);

  it("threads snooze --until (a duration or a time) and unsnooze; a bad --until is a usage error", async () => {
    const started = await cli(["threads", "new", "@@reply snooze me", "--json"]);
    expect(started.code, started.stderr).toBe(0);
    const threadId = (JSON.parse(started.stdout) as { thread: { threadId: string } }).thread.threadId;
    expect((await cli(["threads", "wait", threadId, "--timeout", "60s"])).code).toBe(0);
    const snoozed = await cli(["threads", "snooze", threadId, "--until", "2h", "--json"]);
    expect(snoozed.code, snoozed.stderr).toBe(0);
    const until = (JSON.parse(snoozed.stdout) as { thread: { snoozed: boolean; snoozedUntil: string } }).thread;
    expect(until.snoozed).toBe(true);
    expect(Date.parse(until.snoozedUntil) - Date.now()).toBeGreaterThan(3_600_000);
    const read = JSON.parse((await cli(["threads", "read", threadId, "--json"])).stdout) as {
      thread: { snoozed: boolean };
    };
    expect(read.thread.snoozed).toBe(true);

    const later = await cli(["threads", "snooze", threadId, "--until", "2999-01-01T09:00:00Z"]);
    expect(later.stdout).toContain(`Snoozed ${threadId} until 2999-01-01T09:00:00.000Z.`);
    const woke = await cli(["threads", "unsnooze", threadId]);
    expect(woke.stdout).toContain(`Woke ${threadId}.`);
    expect((await cli(["threads", "unsnooze", threadId])).stdout).toContain(`${threadId} was not snoozed.`);

    const bare = await cli(["threads", "snooze", threadId, "--until", "30"]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain("has no unit");
    const past = await cli(["threads", "snooze", threadId, "--until", "2001-01-01T00:00:00Z"]);
    expect(past.code).toBe(2);
    expect(past.stderr).toContain("not in the future");
  }, 120_000);

  it("run stops its run on Ctrl-C (exit 5); --timeout leaves it going (exit 7)", async () => {
    const running = background(["run", "@@gate cli-ctrl-c @@reply never"]);
    await until("the thread is shown", () => threadIdIn(running.output.stderr) !== undefined, { attempts: 2_400 });
    const threadId = threadIdIn(running.output.stderr)!;
    await waitForRow(home, "SELECT 1 FROM runs WHERE thread_id = ? AND status = 'running'", [threadId]);
    running.child.kill("SIGINT");
    const ended = await running.child;
    expect(ended.exitCode, running.output.stderr).toBe(5);
    expect(running.output.stderr).toContain("Stopping the run");
    expect(runStatus(threadId)).toBe("interrupted");

    const patient = await cli(["run", "@@gate cli-timeout @@reply in time", "--timeout", "2s"]);
    expect(patient.code).toBe(7);
    const waiting = threadIdIn(patient.stderr)!;
    expect(patient.stderr).toContain(`Still running after 2s: switchyard threads wait ${waiting}`);
    expect(runStatus(waiting)).toBe("running");
    releaseGate(gateDir, "cli-timeout");
    const finished = await cli(["threads", "wait", waiting, "--timeout", "60s"]);
    expect(finished.code, finished.stderr).toBe(0);
    expect(finished.stdout).toContain("in time");
  }, 240_000);

  it("token list leaves out the commands' own tokens (all revoked); --all shows them", async () => {
    const listed = await cli(["token", "list", "--json"]);
    expect(JSON.parse(listed.stdout)).toEqual([]);
    const all = JSON.parse((await cli(["token", "list", "--all", "--json"])).stdout) as {
      label: string;
      ephemeral: boolean;
      status: string;
    }[];
    expect(all.length).toBeGreaterThan(10);
    expect(
      all.every(
        (token) => token.ephemeral && token.status === "revoked" && token.label.endsWith("(this terminal command)"),
      ),
    ).toBe(true);
    expect(new Set(all.map((token) => token.label))).toEqual(
      new Set([
        "switchyard run (this terminal command)",
        "switchyard threads new (this terminal command)",
        "switchyard threads (this terminal command)",
      ]),
    );
    expect(endpoint.url).toMatch(/^http:\/\/127\.0\.0\.1:/);
  }, 60_000);
});
