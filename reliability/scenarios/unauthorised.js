// The unauthorised matrix: every way in that must be refused, tried against real servers, one
// figure per surface so each says exactly what it checks.
//
// - /mcp: no token, bad tokens, an expired and a revoked client token (issued and revoked with
//   the CLI while the server runs), the credential of a closed provider session and of sessions
//   that died with a SIGKILLed server, a read-only token on every tool that changes state,
//   another parent's task, mode escalation from a narrower agent, and foreign Host and Origin
//   headers. Provider session credentials come from a harness that leaks them
//   (credential-tap-agent.js), the way an attacker would hold one.
// - /api/v1 with tokens missing a verb, scoped to another project, revoked and expired
//   (lib/unauthorised/api-scopes.js);
// - the web UI's session cookie replayed without the page's own secret (web-cookies.js);
// - signed webhooks: forged, replayed, zero-padded timestamps (webhooks.js);
// - schedules whose creator's token was revoked or expired (schedules.js);
// - linked environments calling without a grant for it, transitive reach included
//   (linked-environments.js, three more servers).
//
// An attempt counts as an unauthorised success when the server served it (2xx over HTTP, a
// non-error tool result, a run started) or when its effect shows up in the database. Each group
// also has controls: a credential that never worked, or a request that could not succeed with
// every right, makes its figure miss, since its refusal would prove nothing. Some figures miss
// on code whose fix is being made in parallel (issue 28): each file's header says which.
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { capturedToken, tappedAgentInstance } from "../lib/agents.js";
import { addProject, issueToken, revokeToken } from "../lib/cli.js";
import { API_FIGURE, tryApiScopes } from "../lib/unauthorised/api-scopes.js";
import { Attempts } from "../lib/unauthorised/attempts.js";
import { REACH_FIGURE, tryLinkedEnvironments } from "../lib/unauthorised/linked-environments.js";
import { SCHEDULE_FIGURE, SCHEDULE_INTERVAL_MS, trySchedulesOfLostTokens } from "../lib/unauthorised/schedules.js";
import { WEBHOOK_FIGURE, tryWebhooks } from "../lib/unauthorised/webhooks.js";
import { COOKIE_FIGURE, tryReplayedCookies } from "../lib/unauthorised/web-cookies.js";
import { readDb, scalar } from "../lib/db.js";
import { callTool, connect, mcpHeaders, mustCall, rawRequest } from "../lib/mcp.js";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "../lib/paths.js";
import { processesWithMarker } from "../lib/processes.js";
import { SwitchyardServer, writeConfig } from "../lib/server.js";
import { sleep, until } from "../lib/wait.js";

const RUNTIME_RANK = { "approval-required": 0, "auto-accept-edits": 1, "full-access": 2 };

const listCall = (projectId) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "t3_thread_list", arguments: { projectId } },
  });

export default {
  name: "unauthorised",
  title: "the unauthorised matrix",
  timeoutMs: 360_000,
  async run(run, report) {
    const home = run.newHome("unauthorised");
    const gateDir = run.dir("unauthorised-gates");
    const captureDir = run.dir("unauthorised-captured-credentials");
    run.knownLeaks.push(captureDir);
    const workspace = run.dir("unauthorised-workspace");
    writeConfig(home, {
      plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
      providers: [
        { id: "alpha", driver: "scripted", options: { gateDir, stateDir: run.dir("unauthorised-scripted-state") } },
        tappedAgentInstance("tapped", { gateDir, stateDir: run.dir("unauthorised-agent-state") }, captureDir),
      ],
      server: { sessionIdleMs: 1_500 },
      scheduling: { minIntervalMs: SCHEDULE_INTERVAL_MS },
    });
    const projectId = await addProject(home, workspace);
    const otherProjectId = await addProject(home, run.dir("unauthorised-other-workspace"));
    const operate = await issueToken(run, home);
    const reader = await issueToken(run, home, { scope: "orchestration:read" });
    let server = await SwitchyardServer.start(run, home);
    const admin = await connect(server.mcpUrl, operate.token);

    // The agents whose credentials leak, each held live at a gate; and an idle full-access
    // thread in default interaction mode, the target of escalation attempts.
    const agents = {};
    const createAgent = async (key, modes) => {
      const outcome = await callTool(admin, "create_threads", {
        projectId,
        threads: [
          { prompt: `@gate hold-${key}\n@say ${key} done`, target: { providerInstanceId: "tapped" }, ...modes },
        ],
      });
      if (!outcome.ok) return outcome;
      agents[key] = { thread: outcome.value.threads[0].thread };
      agents[key].token = await capturedToken(captureDir, `hold-${key}`);
      run.tokens.add(agents[key].token);
      return outcome;
    };
    for (const [key, modes] of Object.entries({
      parent: { runtimeMode: "full-access" },
      otherParent: { runtimeMode: "full-access" },
      narrow: { runtimeMode: "approval-required" },
      closing: { runtimeMode: "full-access" },
    })) {
      const outcome = await createAgent(key, modes);
      if (!outcome.ok)
        throw new Error(`create_threads for the ${key} agent failed: ${outcome.code}: ${outcome.message}`);
    }
    // Only now, with sessions open, has the agent told the driver it has a plan mode.
    const plannerOutcome = await createAgent("planner", { runtimeMode: "full-access", interactionMode: "plan" });
    if (!plannerOutcome.ok)
      report.note(`the plan-mode agent could not be created: ${plannerOutcome.code}: ${plannerOutcome.message}`);
    // Their command lines, for the secrets figure: the credential must not be in them.
    for (const harness of processesWithMarker(captureDir)) run.harnessArgv.push(harness);
    const broad = (
      await mustCall(admin, "create_threads", {
        projectId,
        threads: [
          {
            title: "broad target",
            target: { providerInstanceId: "alpha" },
            runtimeMode: "full-access",
            interactionMode: "default",
          },
        ],
      })
    ).threads[0].thread;
    report.note(
      `agent modes as created: ${Object.entries(agents)
        .map(([key, a]) => `${key} ${a.thread.runtimeMode}/${a.thread.interactionMode}`)
        .join(", ")}`,
    );
    const parentClient = await connect(server.mcpUrl, agents.parent.token);
    const delegated = await mustCall(parentClient, "delegate_task", {
      task: "@@gate hold-child @@reply child done",
      target: { providerInstanceId: "alpha" },
      mode: "async",
      clientRequestId: "matrix-child",
    });
    await parentClient.close();

    const attempts = new Attempts(report);
    const MCP_FIGURE = "mcp";
    /** Records one attempt; `served` is whether the server did what it must refuse. */
    const attempt = (group, label, served, detail = "") => attempts.record(MCP_FIGURE, group, label, served, detail);
    const overHttp = async (group, label, headers, body = listCall(projectId), url = server.mcpUrl) => {
      const answer = await rawRequest(url, { headers, body });
      attempt(
        group,
        label,
        answer.status >= 200 && answer.status < 300,
        `HTTP ${answer.status}${answer.error ? ` ${answer.error}` : ""}`,
      );
      return answer;
    };
    /** Whether a token works right now (a control: a refusal of a token that never worked proves nothing). */
    const works = async (token) =>
      (await rawRequest(server.mcpUrl, { headers: mcpHeaders(token), body: listCall(projectId) })).status === 200;
    const control = async (label, token) => {
      if (!(await works(token)))
        attempts.notSetUp(
          MCP_FIGURE,
          `${label} did not work before it was meant to stop working, so its refusal proves nothing`,
        );
    };

    // No token at all.
    await overHttp("no token", "tools/call without Authorization", mcpHeaders(null));
    await overHttp(
      "no token",
      "initialize without Authorization",
      mcpHeaders(null),
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
      }),
    );
    await overHttp(
      "no token",
      "token in the query string instead of the header",
      mcpHeaders(null),
      listCall(projectId),
      `${server.mcpUrl}?access_token=${operate.token}`,
    );
    try {
      const client = await connect(server.mcpUrl, null);
      await client.listTools();
      attempt("no token", "MCP SDK client without a token", true);
      await client.close();
    } catch {
      attempt("no token", "MCP SDK client without a token", false);
    }

    // Bad tokens.
    const flipped = `${operate.token.slice(0, -1)}${operate.token.endsWith("A") ? "B" : "A"}`;
    for (const [label, value] of [
      ["Basic credentials", `Basic ${Buffer.from("user:pass").toString("base64")}`],
      ["Bearer with no token", "Bearer"],
      ["Bearer with blank token", "Bearer    "],
      ["an unknown sy_ token", `Bearer sy_${randomBytes(32).toString("base64url")}`],
      ["a real token with its last character changed", `Bearer ${flipped}`],
      ["a real token with a character appended", `Bearer ${operate.token}x`],
      ["a real token cut short", `Bearer ${operate.token.slice(0, -1)}`],
      ["a real token under another scheme", `Token ${operate.token}`],
      ["two tokens in one header", `Bearer ${operate.token} ${operate.token}`],
      [
        "the SHA-256 of a real token",
        `Bearer ${(await import("node:crypto")).createHash("sha256").update(operate.token).digest("hex")}`,
      ],
      ["a credential id instead of a token", `Bearer ${operate.id}`],
    ]) {
      await overHttp("bad token", label, { ...mcpHeaders(null), authorization: value });
    }

    // Expired and revoked client tokens, through the CLI against the running server's home.
    const shortLived = await issueToken(run, home, { ttl: "1s" });
    await sleep(1_200);
    await overHttp("expired token", "a client token past its --ttl", mcpHeaders(shortLived.token));
    const revoked = await issueToken(run, home);
    await control("the token to revoke", revoked.token);
    await revokeToken(home, revoked.id);
    await overHttp("revoked token", "a client token after `switchyard token revoke`", mcpHeaders(revoked.token));
    try {
      const client = await connect(server.mcpUrl, revoked.token);
      await client.listTools();
      attempt("revoked token", "MCP SDK client with a revoked token", true);
      await client.close();
    } catch {
      attempt("revoked token", "MCP SDK client with a revoked token", false);
    }

    // A closed provider session's credential: its turn ends, the session closes when idle.
    await control("the closing session's credential", agents.closing.token);
    writeFileSync(join(gateDir, "hold-closing"), "released");
    const closed = await until(
      () =>
        scalar(
          home,
          "SELECT COUNT(*) FROM provider_sessions WHERE thread_id = ? AND status = 'closed'",
          agents.closing.thread.threadId,
        ) > 0,
      { timeoutMs: 20_000, intervalMs: 200 },
    );
    if (!closed) report.note("the closing agent's session did not close within 20 s");
    await overHttp(
      "closed session",
      "a provider-session credential after its session closed (idle)",
      mcpHeaders(agents.closing.token),
    );

    // A read-only client token on every tool that changes state (arguments an operate token may use).
    const readClient = await connect(server.mcpUrl, reader.token);
    const stateChanging = [
      ["t3_thread_send", { threadId: broad.threadId, message: "@@reply from a reader" }],
      ["t3_thread_interrupt", { threadId: agents.parent.thread.threadId }],
      [
        "create_threads",
        { projectId, threads: [{ prompt: "@@reply reader thread", target: { providerInstanceId: "alpha" } }] },
      ],
      ["t3_thread_launch", { projectId, message: "@@reply reader launch", target: { providerInstanceId: "alpha" } }],
      ["task_cancel", { taskId: delegated.taskId }],
      ["t3_thread_update", { threadId: broad.threadId, action: "rename", title: "renamed by a reader" }],
      ["link_pull_request", { threadId: broad.threadId, url: "https://example.invalid/pulls/1" }],
      ["unlink_pull_request", { threadId: broad.threadId }],
      ["delegate_task", { task: "@@reply reader task", target: { providerInstanceId: "alpha" } }],
    ];
    for (const [name, args] of stateChanging) {
      const outcome = await callTool(readClient, name, args);
      attempt("wrong scope", `orchestration:read calling ${name}`, outcome.ok, outcome.ok ? "served" : outcome.code);
    }
    await readClient.close();

    // Another parent's task.
    const other = await connect(server.mcpUrl, agents.otherParent.token);
    for (const [name, args] of [
      ["task_status", { taskId: delegated.taskId }],
      ["task_cancel", { taskId: delegated.taskId }],
    ]) {
      const outcome = await callTool(other, name, args);
      attempt(
        "another parent's task",
        `another agent calling ${name} on the parent's task`,
        outcome.ok,
        outcome.ok ? "served" : outcome.code,
      );
    }
    await other.close();

    // Mode escalation: an approval-required agent and a plan-mode agent acting on broader work.
    const checkCreated = (group, label, outcome, caller) => {
      if (!outcome.ok) return attempt(group, label, false, outcome.code);
      const shells = outcome.value.threads
        ? outcome.value.threads.map((entry) => entry.thread)
        : [outcome.value.thread ?? outcome.value];
      const broader = shells.filter(
        (shell) =>
          (RUNTIME_RANK[shell.runtimeMode] ?? 0) > RUNTIME_RANK[caller.runtimeMode] ||
          (caller.interactionMode === "plan" &&
            shell.interactionMode !== undefined &&
            shell.interactionMode !== "plan"),
      );
      attempt(
        group,
        label,
        broader.length > 0,
        broader.length > 0
          ? `created ${broader.map((s) => `${s.runtimeMode}/${s.interactionMode}`).join(", ")}`
          : "stepped down to the caller's modes",
      );
    };
    const narrow = await connect(server.mcpUrl, agents.narrow.token);
    const narrowModes = agents.narrow.thread;
    for (const [name, args] of [
      ["t3_thread_send", { threadId: broad.threadId, message: "@@reply escalated" }],
      ["t3_thread_interrupt", { threadId: agents.parent.thread.threadId }],
    ]) {
      const outcome = await callTool(narrow, name, args);
      attempt(
        "mode escalation",
        `approval-required agent calling ${name} on a full-access thread`,
        outcome.ok,
        outcome.ok ? "served" : outcome.code,
      );
    }
    checkCreated(
      "mode escalation",
      "approval-required agent creating a full-access thread",
      await callTool(narrow, "create_threads", {
        threads: [{ prompt: "@@reply broad", target: { providerInstanceId: "alpha" }, runtimeMode: "full-access" }],
      }),
      narrowModes,
    );
    checkCreated(
      "mode escalation",
      "approval-required agent launching a full-access thread",
      await callTool(narrow, "t3_thread_launch", {
        message: "@@reply broad",
        target: { providerInstanceId: "alpha" },
        runtimeMode: "full-access",
      }),
      narrowModes,
    );
    checkCreated(
      "mode escalation",
      "approval-required agent delegating a full-access task",
      await callTool(narrow, "delegate_task", {
        task: "@@reply broad",
        target: { providerInstanceId: "alpha" },
        runtimeMode: "full-access",
        clientRequestId: "escalate-1",
      }),
      narrowModes,
    );
    await narrow.close();
    const plannerModes = agents.planner?.thread;
    if (plannerModes?.interactionMode === "plan") {
      const planner = await connect(server.mcpUrl, agents.planner.token);
      const outcome = await callTool(planner, "t3_thread_send", {
        threadId: broad.threadId,
        message: "@@reply escalated",
      });
      attempt(
        "mode escalation",
        "plan-mode agent sending to a default-mode thread",
        outcome.ok,
        outcome.ok ? "served" : outcome.code,
      );
      checkCreated(
        "mode escalation",
        "plan-mode agent creating a default-mode thread",
        await callTool(planner, "create_threads", {
          threads: [{ prompt: "@@reply broad", target: { providerInstanceId: "alpha" }, interactionMode: "default" }],
        }),
        plannerModes,
      );
      checkCreated(
        "mode escalation",
        "plan-mode agent delegating a default-mode task",
        await callTool(planner, "delegate_task", {
          task: "@@reply broad",
          target: { providerInstanceId: "alpha" },
          interactionMode: "default",
          clientRequestId: "escalate-2",
        }),
        plannerModes,
      );
      await planner.close();
    } else {
      attempts.notSetUp(
        MCP_FIGURE,
        `no plan-mode agent (${plannerModes ? `created in ${plannerModes.interactionMode} mode` : "not created"}): the plan-mode escalation cases could not run`,
      );
    }

    // Host and Origin that do not name this loopback server (DNS rebinding), with a valid token.
    for (const host of [
      "evil.example",
      `evil.example:${server.port}`,
      `127.0.0.1.evil.example:${server.port}`,
      `localhost.evil.example:${server.port}`,
      `attacker.test:80`,
    ]) {
      await overHttp("Host/Origin", `Host: ${host}`, mcpHeaders(operate.token, { host }));
    }
    for (const origin of [
      "http://evil.example",
      `http://evil.example:${server.port}`,
      `http://127.0.0.1.evil.example:${server.port}`,
      "https://localhost.evil.example",
      "http://attacker.test",
    ]) {
      await overHttp("Host/Origin", `Origin: ${origin}`, mcpHeaders(operate.token, { origin }));
    }

    // The HTTP API, the web UI's cookie, webhooks and schedules, on the same server.
    const surface = { run, report, home, server, attempts, projectId, otherProjectId };
    const timed = async (label, group) => {
      const started = Date.now();
      await group();
      report.note(`${label} took ${((Date.now() - started) / 1000).toFixed(1)} s`);
    };
    await timed("the HTTP API group", () => tryApiScopes(surface));
    await timed("the web UI cookie group", () => tryReplayedCookies(surface));
    await timed("the webhook group", () => tryWebhooks(surface));
    await timed("the schedule group", () => trySchedulesOfLostTokens(surface));

    // Credentials of sessions that died with a SIGKILLed server, used after the restart.
    await control("the parent's credential", agents.parent.token);
    await server.kill9();
    server = await SwitchyardServer.start(run, home);
    for (const key of ["parent", "otherParent", "narrow"]) {
      await overHttp(
        "session died in a crash",
        `the ${key} agent's credential after kill -9 and a restart`,
        mcpHeaders(agents[key].token),
      );
    }
    if (!(await works(operate.token))) report.note("the operate client token stopped working after the restart");
    await admin.close().catch(() => undefined);

    // Effects that would show a refused call went through anyway.
    const effects = readDb(home, (db) => ({
      broadMessages: db
        .prepare("SELECT COUNT(*) FROM items WHERE thread_id = ? AND kind = 'user_message'")
        .pluck()
        .get(broad.threadId),
      broadTitle: db.prepare("SELECT title FROM threads WHERE id = ?").pluck().get(broad.threadId),
      readerThreads: db
        .prepare(
          "SELECT COUNT(*) FROM items WHERE kind = 'user_message' AND json_extract(data, '$.text') LIKE '@@reply reader%'",
        )
        .pluck()
        .get(),
      task: db.prepare("SELECT status FROM delegated_tasks WHERE id = ?").pluck().get(delegated.taskId),
    }));
    if (effects.broadMessages > 0)
      attempt("effects", "a message reached the full-access target", true, `${effects.broadMessages} message(s)`);
    if (effects.broadTitle === "renamed by a reader") attempt("effects", "the reader's rename took effect", true);
    if (effects.readerThreads > 0) attempt("effects", "the reader's threads exist", true, `${effects.readerThreads}`);
    if (effects.task === "cancelled") attempt("effects", "the parent's task was cancelled by someone else", true);

    writeFileSync(join(gateDir, "hold-child"), "released");
    for (const key of Object.keys(agents)) writeFileSync(join(gateDir, `hold-${key}`), "released");
    await server.stop();

    await timed("the linked environments group (three more servers)", () => tryLinkedEnvironments({ run, attempts }));

    attempts.figure(
      MCP_FIGURE,
      "unauthorised over /mcp: calls served",
      "goal 0: no, bad, expired and revoked tokens; closed and crashed sessions' credentials; a read-only token on every state-changing tool; another parent's task; mode escalation; foreign Host and Origin",
    );
    attempts.figure(
      API_FIGURE,
      "unauthorised over /api/v1: requests served",
      "goal 0: tokens missing operate or approve, scoped to another project, revoked, expired; each answer served with every verb afterwards (control)",
    );
    attempts.figure(
      COOKIE_FIGURE,
      "web UI session cookie replayed without the page's own secret: requests served",
      "goal 0: a read, the event stream, the session and a thread creation, with the cookie alone, with forged Origin, Sec-Fetch-Site and CSRF header, and from another local page (missed before the per-session page secret, issue 28.1)",
    );
    attempts.figure(
      WEBHOOK_FIGURE,
      "signed webhook: forged or replayed deliveries that started a run",
      "goal 0: unsigned, another secret, another body, an hour old, replayed as is, with a zero-padded timestamp, in capitals; one correctly signed delivery started a run (control) (missed before the canonical-timestamp fix, issue 28.2)",
    );
    attempts.figure(
      SCHEDULE_FIGURE,
      "schedules whose creator's token was revoked or expired: schedules that started runs afterwards",
      "goal 0: two interval schedules and a webhook, each run once while the token was valid (control) (missed before schedules paused with their creator, issue 28.3)",
    );
    attempts.figure(
      REACH_FIGURE,
      "calls from linked environments without a grant for them: calls served",
      "goal 0: an unknown link secret, a revoked grant, a verb and a project outside the grant, a link secret on /api/v1 and on a tool no grant offers, A reaching C through B (missed before the lineage check, issue 28.4)",
    );
  },
};
