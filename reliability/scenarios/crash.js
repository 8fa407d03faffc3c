// kill -9 with at least 50 runs in flight, then a restart on the same home. An outside MCP
// client starts 60 runs held at a gate (40 on a provider that resumes sessions, 20 on one that
// cannot), queues 10 more behind them, and fires 20 more create_threads calls while the server
// is SIGKILLed under them. After the restart the client retries every call with the same
// clientRequestId, as a client that lost its connection would, the gate opens, and the event
// log is counted: every run a client was told about exists and ends, each with exactly one
// terminal write, and no retry created a second thread or run.
//
// Counting 0 duplicates proves something only if duplicates were possible. A call the server
// committed but whose answer never reached the client is the one a retry could create twice;
// the kill alone rarely lands between a commit and its answer, so 5 of the burst calls lose
// their answers on the way back (written on a socket that is never read) and the kill waits
// until the log holds them. The scenario checks its own preconditions in a figure of their
// own: burst calls unanswered at the kill, some of them committed (read from the dead server's
// log, before the restart), every call retried after the restart, answered ones among them, and
// the count that finds double creations finding each burst call's creation.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { addProject, issueToken } from "../lib/cli.js";
import { readDb, scalar, terminalWrites, isTerminal } from "../lib/db.js";
import { callTool, connect, mcpHeaders, postAndLoseAnswer } from "../lib/mcp.js";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "../lib/paths.js";
import { SwitchyardServer, writeConfig } from "../lib/server.js";
import { sleep, until } from "../lib/wait.js";

const RESUMING_THREADS = 40;
const NON_RESUMING_THREADS = 20;
const QUEUED = 10;
const BURST = 20;
/** Burst calls whose answers are lost on the way back (committed, never seen by the client). */
const LOST_ANSWERS = 5;

const BURST_PROMPT = (k) => `@@gate release @@reply burst-${k}`;

/** How many threads each burst prompt created, from the event log's projection of user messages. */
function creationsPerPrompt(home, prompts) {
  return readDb(home, (db) => {
    const count = db
      .prepare(
        "SELECT COUNT(DISTINCT thread_id) FROM items WHERE kind = 'user_message' AND json_extract(data, '$.text') = ?",
      )
      .pluck();
    return prompts.map((prompt) => count.get(prompt));
  });
}

/** The ids an answer names, to show what a retry changed. */
function summarize(answer) {
  return {
    threads: answer.threads
      ? answer.threads.map((entry) => [entry.thread.threadId, entry.runId])
      : [[answer.threadId, answer.runId]],
  };
}

export default {
  name: "crash",
  title: "kill -9 with runs in flight, then restart",
  timeoutMs: 240_000,
  async run(run, report) {
    const home = run.newHome("crash");
    const gateDir = run.dir("crash-gates");
    const workspace = run.dir("crash-workspace");
    writeConfig(home, {
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
      providers: [
        { id: "alpha", driver: "scripted", options: { gateDir, stateDir: run.dir("crash-scripted-state") } },
        // Cannot resume a session: its live runs must end interrupted, once, after the crash.
        {
          id: "gamma",
          driver: "scripted",
          options: { gateDir, capabilities: { turns: { interrupt: true, terminalStatusQuality: "strong" } } },
        },
      ],
      budgets: { maxTasksPerRootThread: 10_000 },
    });
    const projectId = await addProject(home, workspace);
    const { token } = await issueToken(run, home);

    /** Every call the client made, to retry after the restart: its tool, arguments and what it was told. */
    const calls = [];
    let server = await SwitchyardServer.start(run, home);
    let client = await connect(server.mcpUrl, token);
    const createBatch = async (key, instance, count, offset) => {
      const args = {
        projectId,
        clientRequestId: key,
        threads: Array.from({ length: count }, (_, i) => ({
          prompt: `@@gate release @@reply done-${key}-${offset + i}`,
          target: { providerInstanceId: instance },
        })),
      };
      const outcome = await callTool(client, "create_threads", args);
      if (!outcome.ok) throw new Error(`create_threads ${key} failed: ${outcome.code}: ${outcome.message}`);
      calls.push({ tool: "create_threads", args, answer: outcome.value });
      return outcome.value.threads;
    };
    const resuming = [
      ...(await createBatch("crash-a", "alpha", 20, 0)),
      ...(await createBatch("crash-b", "alpha", RESUMING_THREADS - 20, 20)),
    ];
    await createBatch("crash-g", "gamma", NON_RESUMING_THREADS, 0);
    for (let i = 0; i < QUEUED; i += 1) {
      const args = {
        threadId: resuming[i].thread.threadId,
        message: `@@reply queued-${i}`,
        mode: "queue",
        clientRequestId: `crash-queue-${i}`,
      };
      const outcome = await callTool(client, "t3_thread_send", args);
      if (!outcome.ok) throw new Error(`t3_thread_send failed: ${outcome.code}: ${outcome.message}`);
      calls.push({ tool: "t3_thread_send", args, answer: outcome.value });
    }
    const held = RESUMING_THREADS + NON_RESUMING_THREADS;
    const live = await until(() => scalar(home, "SELECT COUNT(*) FROM attempts WHERE status = 'running'") >= held, {
      timeoutMs: 60_000,
      intervalMs: 200,
    });
    const inFlight = scalar(
      home,
      "SELECT COUNT(*) FROM runs WHERE status IN ('queued', 'starting', 'running', 'waiting')",
    );
    if (!live)
      report.note(
        `only ${scalar(home, "SELECT COUNT(*) FROM attempts WHERE status = 'running'")} of ${held} turns reached their provider before the kill`,
      );

    // The burst: 20 more creations in flight while the server dies under them, 5 of them with
    // their answers lost.
    const burst = Array.from({ length: BURST }, (_, k) => ({
      tool: "create_threads",
      args: {
        projectId,
        clientRequestId: `crash-burst-${k}`,
        threads: [{ prompt: BURST_PROMPT(k), target: { providerInstanceId: "alpha" } }],
      },
      answer: null,
    }));
    const lostAnswers = burst.slice(0, LOST_ANSWERS);
    const sockets = await Promise.all(
      lostAnswers.map((call, k) =>
        postAndLoseAnswer(server.mcpUrl, {
          headers: mcpHeaders(token),
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: k + 1,
            method: "tools/call",
            params: { name: call.tool, arguments: call.args },
          }),
        }),
      ),
    );
    let answered = 0;
    const burstDone = Promise.allSettled(
      burst.slice(LOST_ANSWERS).map(async (call) => {
        const outcome = await callTool(client, call.tool, call.args, { timeoutMs: 10_000 });
        if (outcome.ok) {
          call.answer = outcome.value;
          answered += 1;
        }
      }),
    );
    const lostCommitted = await until(
      () =>
        answered >= 3 &&
        creationsPerPrompt(
          home,
          lostAnswers.map((call) => call.args.threads[0].prompt),
        ).every((n) => n > 0),
      { timeoutMs: 10_000, intervalMs: 1 },
    );
    if (!lostCommitted)
      report.note("the calls whose answers were lost were not all in the log within 10 s; killing anyway");
    await server.kill9();
    await burstDone;
    for (const socket of sockets) socket.close();
    calls.push(...burst);
    // What the dead server had committed for the calls nobody answered.
    const unanswered = burst.filter((call) => call.answer === null);
    const unansweredCommitted = creationsPerPrompt(
      home,
      unanswered.map((call) => call.args.threads[0].prompt),
    ).filter((n) => n > 0).length;
    report.note(
      `${inFlight} runs in flight (${held} turns held live at a gate, ${QUEUED} queued behind them) and ${unanswered.length} of ${BURST} create_threads calls unanswered when the server was SIGKILLed (${unansweredCommitted} of them committed)`,
    );
    await client.close().catch(() => undefined);

    server = await SwitchyardServer.start(run, home);
    client = await connect(server.mcpUrl, token);
    // Every call again with its clientRequestId: answered ones must replay the same work, and
    // unanswered ones must create it at most once.
    let retryDuplicates = 0;
    let retryMismatches = 0;
    let answeredBefore = 0;
    let retried = 0;
    for (const call of calls) {
      const outcome = await callTool(client, call.tool, call.args);
      if (!outcome.ok)
        throw new Error(
          `retrying ${call.tool} ${call.args.clientRequestId} failed: ${outcome.code}: ${outcome.message}`,
        );
      retried += 1;
      if (call.answer === null) {
        call.answer = outcome.value;
        continue;
      }
      answeredBefore += 1;
      const before = summarize(call.answer);
      const after = summarize(outcome.value);
      // New work for a key that had been answered is a duplicate; the same work named
      // differently is a replay that does not say what it replays.
      const sameThreads =
        JSON.stringify(before.threads.map(([thread]) => thread)) ===
        JSON.stringify(after.threads.map(([thread]) => thread));
      if (!outcome.value.replayed || !sameThreads) retryDuplicates += 1;
      else if (JSON.stringify(before.threads) !== JSON.stringify(after.threads)) {
        retryMismatches += 1;
        if (retryMismatches <= 3)
          report.note(
            `retrying ${call.tool} ${call.args.clientRequestId} replayed other runs than it first answered: ${JSON.stringify(before.threads.slice(0, 2))}… then ${JSON.stringify(after.threads.slice(0, 2))}…`,
          );
      }
    }
    const accepted = new Set();
    for (const call of calls) {
      if (call.tool === "create_threads") for (const entry of call.answer.threads) accepted.add(entry.runId);
      else accepted.add(call.answer.runId);
    }
    writeFileSync(join(gateDir, "release"), "released");
    const settled = await until(
      () =>
        readDb(home, (db) => {
          const statuses = db.prepare("SELECT id, status FROM runs").all();
          const byId = new Map(statuses.map((row) => [row.id, row.status]));
          return (
            [...accepted].every((id) => isTerminal(byId.get(id))) && statuses.every((row) => isTerminal(row.status))
          );
        }),
      { timeoutMs: 90_000, intervalMs: 250 },
    );
    if (!settled) report.note("not every run ended within 90 s of the gate opening");
    await sleep(200);
    await client.close().catch(() => undefined);
    await server.stop();

    const runs = readDb(
      home,
      (db) =>
        new Map(
          db
            .prepare(
              "SELECT id, status, json_extract(data, '$.terminalReason') AS reason, json_extract(data, '$.error.message') AS error FROM runs",
            )
            .all()
            .map((row) => [row.id, row]),
        ),
    );
    const creationsPerBurst = creationsPerPrompt(
      home,
      burst.map((call) => call.args.threads[0].prompt),
    );
    const writes = terminalWrites(home);
    const lost = [...accepted].filter((id) => !runs.has(id) || !isTerminal(runs.get(id).status));
    const rewritten = [...writes.values()].filter((n) => n > 1).length;
    const duplicateCreations = creationsPerBurst.filter((n) => n > 1).length;
    const finalizedOnce = [...accepted].filter((id) => writes.get(id) === 1).length;
    const byStatus = {};
    for (const id of accepted) {
      const key = runs.has(id)
        ? `${runs.get(id).status}${runs.get(id).reason ? ` (${runs.get(id).reason})` : ""}`
        : "missing";
      byStatus[key] = (byStatus[key] ?? 0) + 1;
    }
    const failures = [...accepted].map((id) => runs.get(id)).filter((row) => row?.status === "failed");
    for (const row of failures.slice(0, 3)) report.note(`run ${row.id} failed (${row.reason}): ${row.error}`);
    report.note(
      `${accepted.size} accepted runs ended: ${Object.entries(byStatus)
        .map(([status, n]) => `${n} ${status}`)
        .join(", ")}`,
    );
    report.figure(
      "kill -9 with runs in flight: runs lost",
      `${lost.length} of ${accepted.size}`,
      "goal 0",
      lost.length === 0,
    );
    report.figure(
      "kill -9 with runs in flight: runs duplicated",
      `${rewritten + retryDuplicates + duplicateCreations} (${rewritten} finalized twice, ${retryDuplicates} retries not replayed, ${duplicateCreations} double creations)`,
      "goal 0",
      rewritten + retryDuplicates + duplicateCreations === 0,
    );
    report.figure(
      "kill -9 with runs in flight: retries after the restart answered with the runs first answered",
      `${answeredBefore - retryDuplicates - retryMismatches} of ${answeredBefore}`,
      "goal all",
      retryDuplicates + retryMismatches === 0,
    );
    report.figure(
      "kill -9 with runs in flight: runs finalized exactly once",
      `${finalizedOnce} of ${accepted.size}`,
      "goal all",
      finalizedOnce === accepted.size && accepted.size >= 50,
    );
    // Every burst call was retried, so each must have created its thread once: a count that
    // finds none for some call cannot be trusted to find two.
    const counted = creationsPerBurst.filter((n) => n >= 1).length;
    report.figure(
      "kill -9 with runs in flight: duplicates were possible (preconditions of the figures above)",
      `${unanswered.length} of ${BURST} burst calls unanswered at the kill, ${unansweredCommitted} of them already committed; ${retried} of ${calls.length} calls retried after the restart, ${answeredBefore} of them answered before it; the creation count found ${counted} of ${BURST} burst creations`,
      "goal at least 1 unanswered and committed, every call retried, at least 1 answered one retried, every creation found",
      unansweredCommitted >= 1 && retried === calls.length && answeredBefore >= 1 && counted === BURST,
    );
  },
};
