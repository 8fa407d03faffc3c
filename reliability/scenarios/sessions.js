// Open and close 50 provider sessions whose harnesses are real processes, then restart, and
// count the processes left behind. Each session runs the sdk's scripted ACP agent through the
// Grok plugin; the agent first starts two long-running tool processes, as a harness running shell
// commands does: one in the harness's process group, and one that calls setsid and so leaves the
// group (and its session) behind. Three ways a session ends: closed when idle, closed by a
// graceful shutdown (SIGTERM) while open, and lost in a SIGKILL of the server followed by a
// restart (the restarted server must stop what the dead one left).
//
// Orphans are found by their environment, not their process group: the agent's shell exports a
// marker that every descendant inherits wherever it moves (reliability/lib/processes.js reads
// /proc/<pid>/environ). Each server start gets a marker value of its own (the home's config is
// rewritten before it starts), so what a dead server left is told apart from what its successor
// opened. Every figure also checks its precondition: each harness had a process outside its
// process group while the sessions were open, so a group-only search could not have seen it.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentWithToolProcessInstance } from "../lib/agents.js";
import { addProject, issueToken } from "../lib/cli.js";
import { scalar } from "../lib/db.js";
import { callTool, connect, mustCall } from "../lib/mcp.js";
import { killPid, processGroup, processesWithEnv, processesWithMarker } from "../lib/processes.js";
import { SwitchyardServer, writeConfig } from "../lib/server.js";
import { mapConcurrent, until } from "../lib/wait.js";

const SESSIONS = 50;
const MARKER_NAME = "SWITCHYARD_RELIABILITY_SESSION";

export default {
  name: "sessions",
  title: `open and close ${SESSIONS} harness sessions, then restart (orphaned processes)`,
  timeoutMs: 420_000,
  async run(run, report) {
    const home = run.newHome("sessions");
    const gateDir = run.dir("sessions-gates");
    // The agents' state folder is in every agent's argv: the marker that finds the agents.
    const stateDir = run.dir("sessions-agent-state");
    // The environment marker: unique to this run, one value per server start.
    const markerPrefix = `${run.root}/sessions`;
    let generation = 0;
    const startServer = async () => {
      generation += 1;
      const marker = { name: MARKER_NAME, value: `${markerPrefix}#${generation}` };
      writeConfig(home, {
        providers: [agentWithToolProcessInstance("grok", { stateDir, gateDir }, { marker })],
        server: { sessionIdleMs: 1_500 },
      });
      return { server: await SwitchyardServer.start(run, home), marker: marker.value };
    };
    const projectId = await addProject(home, run.dir("sessions-workspace"));
    const { token } = await issueToken(run, home);
    let { server, marker } = await startServer();
    let client = await connect(server.mcpUrl, token);

    /** Every process this scenario's harnesses started, by their marker (one server start's, or all). */
    const descendantsOf = (value) =>
      processesWithEnv(MARKER_NAME, (found) =>
        value === null ? found.startsWith(`${markerPrefix}#`) : found === value,
      );

    /**
     * Waits until every thread has a live turn and a harness process; returns how many harness
     * process groups there were and how many of the harnesses' processes were outside them.
     */
    const openSessions = async (phase) => {
      const ready = await until(
        () =>
          scalar(home, "SELECT COUNT(*) FROM attempts WHERE status = 'running'") >= SESSIONS &&
          processesWithMarker(stateDir).length >= SESSIONS,
        { timeoutMs: 120_000, intervalMs: 250 },
      );
      const harnesses = processesWithMarker(stateDir);
      if (!ready)
        report.note(
          `${phase}: only ${scalar(home, "SELECT COUNT(*) FROM attempts WHERE status = 'running'")} live turns and ${harnesses.length} harness processes after 120 s`,
        );
      for (const harness of harnesses) run.harnessArgv.push(harness);
      const groups = new Set(harnesses.map((h) => processGroup(h.pid)).filter((group) => group !== null));
      // Each agent starts its setsid child before it becomes the agent, so they are all there.
      const tree = descendantsOf(marker);
      const escaped = tree.filter((p) => !groups.has(p.pgid));
      report.note(
        `${phase}: ${harnesses.length} harnesses in ${groups.size} process groups; ${tree.length} processes carry the marker, ${escaped.length} of them outside every harness's group (setsid)`,
      );
      return { groups: groups.size, escaped: escaped.length, marker };
    };
    /** Processes still alive with `value`'s marker once they had `graceMs` to go; stops them afterwards. */
    const survivors = async (value, graceMs = 15_000) => {
      await until(() => descendantsOf(value).length === 0, { timeoutMs: graceMs, intervalMs: 200 });
      const left = descendantsOf(value);
      for (const process of left) killPid(process.pid);
      return left;
    };
    const describe = (left) => {
      if (left.length === 0) return "";
      const sessionLeaders = left.filter((p) => p.sid === p.pid).length;
      return ` (${[...new Set(left.map((p) => p.argv[0]?.split("/").at(-1)))].join(", ")}; ${sessionLeaders} leading a session of their own)`;
    };
    const opened = (open) => open.groups >= SESSIONS && open.escaped >= SESSIONS;
    const openedGoal = `goal 0, with ${SESSIONS} harness groups and ${SESSIONS} processes outside them while open`;
    const sendAll = (text) =>
      mapConcurrent(threadIds, 10, (threadId) => mustCall(client, "t3_thread_send", { threadId, message: text }));
    const release = (gate) => writeFileSync(join(gateDir, gate), "released");
    const settle = async (phase) => {
      const done = await until(
        () =>
          scalar(home, "SELECT COUNT(*) FROM runs WHERE status IN ('queued', 'starting', 'running', 'waiting')") === 0,
        { timeoutMs: 90_000, intervalMs: 250 },
      );
      if (!done) report.note(`${phase}: runs were still active after 90 s`);
    };

    // 1. Open 50 sessions (each held on a live turn), then let them finish and close when idle.
    const threadIds = [];
    for (let offset = 0; offset < SESSIONS; offset += 20) {
      const count = Math.min(20, SESSIONS - offset);
      const created = await mustCall(client, "create_threads", {
        projectId,
        threads: Array.from({ length: count }, (_, i) => ({
          prompt: `@gate gate-a\n@say opened ${offset + i}`,
          target: { providerInstanceId: "grok" },
        })),
      });
      threadIds.push(...created.threads.map((entry) => entry.thread.threadId));
    }
    const openA = await openSessions("open");
    release("gate-a");
    await settle("close");
    const closed = await until(
      () => scalar(home, "SELECT COUNT(*) FROM provider_sessions WHERE status != 'closed'") === 0,
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    if (!closed)
      report.note(
        `${scalar(home, "SELECT COUNT(*) FROM provider_sessions WHERE status != 'closed'")} sessions still open 60 s after their turns ended`,
      );
    const leftAfterClose = await survivors(openA.marker);
    report.figure(
      `${SESSIONS} sessions opened and closed: orphaned processes`,
      `${leftAfterClose.length}${describe(leftAfterClose)}`,
      openedGoal,
      leftAfterClose.length === 0 && closed && opened(openA),
    );

    // 2. Open them again and stop the server gracefully while they are open; start it again.
    await sendAll("@gate gate-b\n@say again");
    const openB = await openSessions("reopen");
    await client.close().catch(() => undefined);
    const stoppedInTime = await server.stop();
    const leftAfterStop = await survivors(openB.marker);
    if (!stoppedInTime) report.note("the server did not stop within 20 s of SIGTERM");
    report.figure(
      `graceful restart with ${SESSIONS} sessions open: orphaned processes`,
      `${leftAfterStop.length}${describe(leftAfterStop)}`,
      openedGoal,
      leftAfterStop.length === 0 && opened(openB),
    );
    ({ server, marker } = await startServer());
    client = await connect(server.mcpUrl, token);
    release("gate-b");
    await settle("after the graceful restart");

    // 3. Open them once more, SIGKILL the server, start it again on the same home.
    await sendAll("@gate gate-c\n@say once more");
    const openC = await openSessions("before the kill");
    const leadersC = processesWithMarker(stateDir).map((harness) => harness.pid);
    await client.close().catch(() => undefined);
    await server.kill9();
    // The agents see their stdin close and exit; their tool processes do not. Restart only once
    // the agents are gone (reaped, not even zombies), as after a supervisor's restart delay, so
    // the figure does not depend on which happens first.
    const agentsGone = await until(() => leadersC.every((pid) => !existsSync(`/proc/${pid}`)), {
      timeoutMs: 20_000,
      intervalMs: 100,
    });
    if (!agentsGone)
      report.note(
        `${leadersC.filter((pid) => existsSync(`/proc/${pid}`)).length} agent processes were not gone 20 s after the server was killed`,
      );
    ({ server, marker } = await startServer());
    const leftAfterCrash = await survivors(openC.marker);
    report.figure(
      `kill -9 and restart with ${SESSIONS} sessions open: orphaned processes`,
      `${leftAfterCrash.length}${describe(leftAfterCrash)}`,
      openedGoal,
      leftAfterCrash.length === 0 && opened(openC),
    );

    // Whatever the restarted server opened itself must be gone after it shuts down, and so must
    // anything any harness of this scenario started.
    client = await connect(server.mcpUrl, token);
    release("gate-c");
    const probe = await callTool(client, "t3_thread_list", { projectId });
    if (!probe.ok) report.note(`t3_thread_list after the crash restart failed: ${probe.code}`);
    await settle("after the crash restart");
    await client.close().catch(() => undefined);
    await server.stop();
    const leftAtEnd = await survivors(null, 10_000);
    const strays = processesWithMarker(stateDir).filter((stray) => !leftAtEnd.some((p) => p.pid === stray.pid));
    for (const stray of strays) killPid(stray.pid);
    const leftover = [...leftAtEnd, ...strays.map((stray) => ({ ...stray, sid: null }))];
    report.figure(
      "final graceful shutdown: orphaned processes",
      `${leftover.length}${describe(leftover)}`,
      "goal 0",
      leftover.length === 0,
    );
  },
};
