// Open and close 50 provider sessions whose harnesses are real processes, then restart, and
// count the processes left behind. Each session runs the sdk's scripted ACP agent through the
// Grok plugin; the agent starts a long-running tool process in its own process group first, as
// a harness running a shell command does, so an orphan is anything still alive in a harness's
// process group once its session is gone. Three ways a session ends: closed when idle, closed
// by a graceful shutdown (SIGTERM) while open, and lost in a SIGKILL of the server followed by
// a restart (the restarted server must stop what the dead one left).
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentWithToolProcessInstance } from "../lib/agents.js";
import { addProject, issueToken } from "../lib/cli.js";
import { scalar } from "../lib/db.js";
import { callTool, connect, mustCall } from "../lib/mcp.js";
import { killPid, processGroup, processesInGroups, processesWithMarker } from "../lib/processes.js";
import { SwitchyardServer, writeConfig } from "../lib/server.js";
import { mapConcurrent, until } from "../lib/wait.js";

const SESSIONS = 50;

export default {
  name: "sessions",
  title: `open and close ${SESSIONS} harness sessions, then restart (orphaned processes)`,
  timeoutMs: 420_000,
  async run(run, report) {
    const home = run.newHome("sessions");
    const gateDir = run.dir("sessions-gates");
    // The agents' state folder is in every agent's argv: the marker that finds them.
    const marker = run.dir("sessions-agent-state");
    writeConfig(home, { providers: [agentWithToolProcessInstance("grok", { stateDir: marker, gateDir })], server: { sessionIdleMs: 1_500 } });
    const projectId = await addProject(home, run.dir("sessions-workspace"));
    const { token } = await issueToken(run, home);
    let server = await SwitchyardServer.start(run, home);
    let client = await connect(server.mcpUrl, token);
    const everyGroup = new Set();

    /** Waits until every thread has a live turn and a harness process, and returns the harness groups. */
    const liveGroups = async (phase) => {
      const ready = await until(
        () => scalar(home, "SELECT COUNT(*) FROM attempts WHERE status = 'running'") >= SESSIONS && processesWithMarker(marker).length >= SESSIONS,
        { timeoutMs: 120_000, intervalMs: 250 },
      );
      const harnesses = processesWithMarker(marker);
      if (!ready) report.note(`${phase}: only ${scalar(home, "SELECT COUNT(*) FROM attempts WHERE status = 'running'")} live turns and ${harnesses.length} harness processes after 120 s`);
      for (const harness of harnesses) run.harnessArgv.push(harness);
      const groups = new Set(harnesses.map((h) => processGroup(h.pid)).filter((group) => group !== null));
      for (const group of groups) everyGroup.add(group);
      return groups;
    };
    /** Processes still alive in `groups` once they had `graceMs` to go; stops them afterwards. */
    const survivors = async (groups, graceMs = 15_000) => {
      await until(() => processesInGroups(groups).length === 0, { timeoutMs: graceMs, intervalMs: 200 });
      const left = processesInGroups(groups);
      for (const process of left) killPid(process.pid);
      return left;
    };
    const describe = (left) => (left.length === 0 ? "" : ` (${[...new Set(left.map((p) => p.argv[0]?.split("/").at(-1)))].join(", ")})`);
    const sendAll = (text) => mapConcurrent(threadIds, 10, (threadId) => mustCall(client, "t3_thread_send", { threadId, message: text }));
    const release = (gate) => writeFileSync(join(gateDir, gate), "released");
    const settle = async (phase) => {
      const done = await until(() => scalar(home, "SELECT COUNT(*) FROM runs WHERE status IN ('queued', 'starting', 'running', 'waiting')") === 0, { timeoutMs: 90_000, intervalMs: 250 });
      if (!done) report.note(`${phase}: runs were still active after 90 s`);
    };

    // 1. Open 50 sessions (each held on a live turn), then let them finish and close when idle.
    const threadIds = [];
    for (let offset = 0; offset < SESSIONS; offset += 20) {
      const count = Math.min(20, SESSIONS - offset);
      const created = await mustCall(client, "create_threads", { projectId, threads: Array.from({ length: count }, (_, i) => ({ prompt: `@gate gate-a\n@say opened ${offset + i}`, target: { providerInstanceId: "grok" } })) });
      threadIds.push(...created.threads.map((entry) => entry.thread.threadId));
    }
    const groupsA = await liveGroups("open");
    report.note(`${SESSIONS} sessions open: ${groupsA.size} harness process groups, ${processesInGroups(groupsA).length} processes`);
    release("gate-a");
    await settle("close");
    const closed = await until(() => scalar(home, "SELECT COUNT(*) FROM provider_sessions WHERE status != 'closed'") === 0, { timeoutMs: 60_000, intervalMs: 250 });
    if (!closed) report.note(`${scalar(home, "SELECT COUNT(*) FROM provider_sessions WHERE status != 'closed'")} sessions still open 60 s after their turns ended`);
    const leftAfterClose = await survivors(groupsA);
    report.figure(`${SESSIONS} sessions opened and closed: orphaned processes`, `${leftAfterClose.length}${describe(leftAfterClose)}`, "goal 0", leftAfterClose.length === 0 && closed && groupsA.size >= SESSIONS);

    // 2. Open them again and stop the server gracefully while they are open; start it again.
    await sendAll("@gate gate-b\n@say again");
    const groupsB = await liveGroups("reopen");
    await client.close().catch(() => undefined);
    const stoppedInTime = await server.stop();
    const leftAfterStop = await survivors(groupsB);
    if (!stoppedInTime) report.note("the server did not stop within 20 s of SIGTERM");
    report.figure(`graceful restart with ${SESSIONS} sessions open: orphaned processes`, `${leftAfterStop.length}${describe(leftAfterStop)}`, "goal 0", leftAfterStop.length === 0 && groupsB.size >= SESSIONS);
    server = await SwitchyardServer.start(run, home);
    client = await connect(server.mcpUrl, token);
    release("gate-b");
    await settle("after the graceful restart");

    // 3. Open them once more, SIGKILL the server, start it again on the same home.
    await sendAll("@gate gate-c\n@say once more");
    const groupsC = await liveGroups("before the kill");
    const leadersC = processesWithMarker(marker).map((harness) => harness.pid);
    await client.close().catch(() => undefined);
    await server.kill9();
    // The agents see their stdin close and exit; their tool processes do not. Restart only once
    // the agents are gone (reaped, not even zombies), as after a supervisor's restart delay, so
    // the figure does not depend on which happens first.
    const agentsGone = await until(() => leadersC.every((pid) => !existsSync(`/proc/${pid}`)), { timeoutMs: 20_000, intervalMs: 100 });
    if (!agentsGone) report.note(`${leadersC.filter((pid) => existsSync(`/proc/${pid}`)).length} agent processes were not gone 20 s after the server was killed`);
    server = await SwitchyardServer.start(run, home);
    const leftAfterCrash = await survivors(groupsC);
    report.figure(`kill -9 and restart with ${SESSIONS} sessions open: orphaned processes`, `${leftAfterCrash.length}${describe(leftAfterCrash)}`, "goal 0", leftAfterCrash.length === 0 && groupsC.size >= SESSIONS);

    // Whatever the restarted server opened itself must be gone after it shuts down.
    client = await connect(server.mcpUrl, token);
    release("gate-c");
    const probe = await callTool(client, "t3_thread_list", { projectId });
    if (!probe.ok) report.note(`t3_thread_list after the crash restart failed: ${probe.code}`);
    await settle("after the crash restart");
    for (const harness of processesWithMarker(marker)) everyGroup.add(processGroup(harness.pid));
    await client.close().catch(() => undefined);
    await server.stop();
    const leftAtEnd = await survivors(everyGroup, 10_000);
    const strays = processesWithMarker(marker);
    for (const stray of strays) killPid(stray.pid);
    const leftover = [...leftAtEnd, ...strays.filter((stray) => !leftAtEnd.some((p) => p.pid === stray.pid))];
    report.figure("final graceful shutdown: orphaned processes", `${leftover.length}${describe(leftover)}`, "goal 0", leftover.length === 0);
  },
};
