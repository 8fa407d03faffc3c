// Calls from another environment that has no grant for what it asks (docs/multi-machine.md).
// Three servers on loopback, each with its own home: A, B and C. B granted A some projects and
// verbs; C granted B (and only B). From A, through links: a secret B never issued, a grant
// revoked on B (it worked before: the control), a grant without the verb a call needs, a project
// outside the grant; on B directly: a link secret on the HTTP API (link secrets are for /mcp
// only) and on a tool no grant offers. And transitive reach: A's agent delegates a child to B
// whose script delegates on to C through B's own link; C never granted A anything, so no thread
// may appear on C. The child's call is the control: it must have been made (its tool item on B
// completed), or C's emptiness proves nothing.
//
// Main's code lets the child on B reach C, so this figure misses there until the lineage check
// lands (issue 28, item 4: transitive reach).
import { api, describeAnswer, served } from "../api.js";
import { addLink, addProject, issueGrant, issueToken, revokeGrant } from "../cli.js";
import { readDb, scalar } from "../db.js";
import { callTool, connect, mcpHeaders, rawRequest } from "../mcp.js";
import { SCRIPTED_PROVIDER_PLUGIN_DIR } from "../paths.js";
import { SwitchyardServer, writeConfig } from "../server.js";
import { until } from "../wait.js";

export const REACH_FIGURE = "reach";

/** A home with a scripted provider `alpha` and a project, served on loopback. */
async function environment(run, name, projects = 1) {
  const home = run.newHome(`reach-${name}`);
  writeConfig(home, {
    plugins: [SCRIPTED_PROVIDER_PLUGIN_DIR],
    providers: [
      {
        id: "alpha",
        driver: "scripted",
        options: { gateDir: run.dir(`reach-${name}-gates`), stateDir: run.dir(`reach-${name}-state`) },
      },
    ],
  });
  const projectIds = [];
  for (let i = 0; i < projects; i += 1)
    projectIds.push(await addProject(home, run.dir(`reach-${name}-workspace-${i}`)));
  const server = await SwitchyardServer.start(run, home);
  return { name, home, server, projectIds };
}

export async function tryLinkedEnvironments({ run, attempts }) {
  const a = await environment(run, "a");
  const b = await environment(run, "b", 2);
  const c = await environment(run, "c");
  try {
    const [granted, notGranted] = b.projectIds;
    const full = await issueGrant(run, b.home, {
      forName: "a",
      verbs: "read,create,send,delegate,cancel",
      projects: granted,
    });
    const readOnly = await issueGrant(run, b.home, { forName: "a-read", verbs: "read", projects: granted });
    const toRevoke = await issueGrant(run, b.home, { forName: "a-revoked", verbs: "read,create", projects: granted });
    const forged = `${full.secret.slice(0, -4)}${full.secret.slice(-4) === "AAAA" ? "BBBB" : "AAAA"}`;
    const cForB = await issueGrant(run, c.home, { forName: "b", verbs: "read,create,delegate", projects: "*" });
    await addLink(a.home, "b", b.server.url, full.secret);
    await addLink(a.home, "b-read", b.server.url, readOnly.secret);
    await addLink(a.home, "b-revoked", b.server.url, toRevoke.secret);
    await addLink(a.home, "b-forged", b.server.url, forged);
    await addLink(b.home, "c", c.server.url, cForB.secret);

    const { token } = await issueToken(run, a.home, { verbs: "read,operate" });
    const client = await connect(a.server.mcpUrl, token);
    const viaLink = async (group, label, tool, args) => {
      const outcome = await callTool(client, tool, args);
      attempts.record(REACH_FIGURE, group, label, outcome.ok, outcome.ok ? "served" : outcome.code);
      return outcome;
    };
    const list = (environmentId, projectId = granted) => ({ environmentId, projectId });
    const create = (environmentId, projectId = granted) => ({
      environmentId,
      projectId,
      threads: [
        { title: "refused across environments", prompt: "@@reply refused", target: { providerInstanceId: "alpha" } },
      ],
    });

    await viaLink("no grant", "a link secret B never issued", "t3_thread_list", list("b-forged"));
    const before = await callTool(client, "t3_thread_list", list("b-revoked"));
    if (!before.ok)
      attempts.notSetUp(
        REACH_FIGURE,
        `the grant to revoke did not work before it was revoked (${before.code}: ${before.message})`,
      );
    await revokeGrant(b.home, toRevoke.id);
    await viaLink("no grant", "a grant revoked on B", "t3_thread_list", list("b-revoked"));
    await viaLink("no grant", "a grant revoked on B, creating", "create_threads", create("b-revoked"));
    const controls = [
      ["the read-only grant, reading", await callTool(client, "t3_thread_list", list("b-read"))],
      ["the full grant, on its own project", await callTool(client, "t3_thread_list", list("b"))],
    ];
    for (const [label, outcome] of controls)
      if (!outcome.ok)
        attempts.notSetUp(
          REACH_FIGURE,
          `${label} did not work (${outcome.code}: ${outcome.message}), so refusals beyond it prove nothing`,
        );
    await viaLink("outside the grant", "a grant without create", "create_threads", create("b-read"));
    await viaLink("outside the grant", "a project outside the grant, listing", "t3_thread_list", list("b", notGranted));
    await viaLink(
      "outside the grant",
      "a project outside the grant, creating",
      "create_threads",
      create("b", notGranted),
    );

    // On B directly, with the link secret A holds.
    const overApi = await api(b.server, "GET", "/projects", { token: full.secret });
    attempts.record(
      REACH_FIGURE,
      "link secret elsewhere",
      "the link secret on B's HTTP API",
      served(overApi),
      describeAnswer(overApi),
    );
    const notOffered = await rawRequest(b.server.mcpUrl, {
      headers: mcpHeaders(full.secret),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: {
          name: "schedule_task",
          arguments: {
            projectId: granted,
            title: "x",
            prompt: "x",
            schedule: { type: "interval", everyMs: 3_600_000 },
          },
        },
      }),
    });
    const notOfferedServed = notOffered.status === 200 && !/"isError"\s*:\s*true/.test(notOffered.body);
    attempts.record(
      REACH_FIGURE,
      "link secret elsewhere",
      "the link secret calling schedule_task, which no grant offers",
      notOfferedServed,
      `HTTP ${notOffered.status}`,
    );

    // Transitive reach: A's agent -> a child on B -> C, which granted only B.
    const onC = JSON.stringify({
      environmentId: "c",
      task: "@@reply reached C",
      target: { providerInstanceId: "alpha" },
      mode: "async",
      clientRequestId: "transitive-to-c",
    });
    const onB = JSON.stringify({
      environmentId: "b",
      projectId: granted,
      task: `@@tool delegate_task ${onC} @@reply child done`,
      target: { providerInstanceId: "alpha" },
      mode: "async",
      clientRequestId: "transitive-to-b",
    });
    const parent = await callTool(client, "create_threads", {
      projectId: a.projectIds[0],
      threads: [
        {
          title: "transitive parent",
          prompt: `@@tool delegate_task ${onB} @@reply parent done`,
          target: { providerInstanceId: "alpha" },
          runtimeMode: "full-access",
        },
      ],
    });
    await client.close().catch(() => undefined);
    if (!parent.ok) {
      attempts.notSetUp(
        REACH_FIGURE,
        `the transitive parent could not be created on A: ${parent.code}: ${parent.message}`,
      );
      return;
    }
    const childCalled = await until(
      () =>
        readDb(b.home, (db) =>
          db
            .prepare(
              "SELECT COUNT(*) FROM items WHERE kind = 'tool_call' AND json_extract(data, '$.data.name') LIKE '%delegate_task' AND json_extract(data, '$.status') IN ('completed', 'failed') AND thread_id IN (SELECT child_thread_id FROM reach_foreign_tasks)",
            )
            .pluck()
            .get(),
        ) > 0,
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    if (!childCalled) {
      const children = scalar(b.home, "SELECT COUNT(*) FROM reach_foreign_tasks");
      attempts.notSetUp(
        REACH_FIGURE,
        `the child on B did not make its delegate_task call to C within 30 s (${children} child(ren) from A on B)`,
      );
    }
    const threadsOnC = scalar(c.home, "SELECT COUNT(*) FROM threads");
    attempts.record(
      REACH_FIGURE,
      "transitive",
      "A's agent reaching C through a child on B (C granted only B)",
      threadsOnC > 0,
      `${threadsOnC} thread(s) created on C`,
    );
    const refusedOnB = scalar(b.home, "SELECT COUNT(*) FROM threads WHERE title = 'refused across environments'");
    if (refusedOnB > 0)
      attempts.record(REACH_FIGURE, "effects", "threads a refused call created on B", true, `${refusedOnB}`);
  } finally {
    for (const env of [a, b, c]) await env.server.stop();
  }
}
