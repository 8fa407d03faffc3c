// The HTTP API (/api/v1) with each kind of token that must be refused: a token missing each verb
// it would need (read only: no operate, no approve; read+operate: no approve; read+approve: no
// operate; every verb includes read, so no token lacks it), a token scoped to another project,
// a revoked and an expired one. The targets are real: a thread with an approval pending and
// one with a question pending. Afterwards the requests are pending still, nothing refused was
// created or sent, and the same answers made with a token that has every verb are served (the
// control: a refusal of a request that could never succeed proves nothing).
import { api, describeAnswer, served } from "../api.js";
import { issueToken, revokeToken } from "../cli.js";
import { scalar } from "../db.js";
import { sleep, until } from "../wait.js";

export const API_FIGURE = "api";

const EXPIRING_TTL_S = 5;

export async function tryApiScopes({ run, home, server, attempts, projectId, otherProjectId }) {
  // The token that will expire, first, so it can be seen working before it does.
  const expired = await issueToken(run, home, { verbs: "read,operate,approve", ttl: `${EXPIRING_TTL_S}s` });
  const expiresAt = Date.now() + EXPIRING_TTL_S * 1000;
  if (!served(await api(server, "GET", "/projects", { token: expired.token })))
    attempts.notSetUp(API_FIGURE, "the token meant to expire did not work before it expired");
  const full = await issueToken(run, home, { verbs: "read,operate,approve" });
  const tokens = {
    "read only": await issueToken(run, home, { verbs: "read" }),
    "read+operate (no approve)": await issueToken(run, home, { verbs: "read,operate" }),
    "read+approve (no operate)": await issueToken(run, home, { verbs: "read,approve" }),
    "another project's": await issueToken(run, home, { verbs: "read,operate,approve", projects: otherProjectId }),
  };
  const revoked = await issueToken(run, home, { verbs: "read,operate,approve" });

  // Targets: an approval and a question, each pending on a live turn.
  const created = await api(server, "POST", "/threads", {
    token: full.token,
    body: {
      projectId,
      threads: [
        {
          title: "api approval target",
          prompt: "@@approve rm -rf build @@reply approval answered",
          target: { providerInstanceId: "alpha" },
          runtimeMode: "approval-required",
        },
        {
          title: "api question target",
          prompt: "@@ask Which branch? @@reply question answered",
          target: { providerInstanceId: "alpha" },
          runtimeMode: "approval-required",
        },
      ],
    },
  });
  if (!served(created))
    throw new Error(`creating the API targets failed: ${describeAnswer(created)} ${created.body.slice(0, 300)}`);
  const [approvalThread, questionThread] = created.json.threads.map((entry) => entry.thread.threadId);
  const firstPending = (threadId) =>
    until(
      async () =>
        (await api(server, "GET", `/threads/${threadId}/pending-requests`, { token: full.token })).json?.requests?.[0]
          ?.requestId ?? null,
      { timeoutMs: 30_000, intervalMs: 200 },
    );
  const approval = await firstPending(approvalThread);
  const question = await firstPending(questionThread);
  if (!approval || !question) {
    attempts.notSetUp(
      API_FIGURE,
      `pending requests did not open within 30 s (approval ${approval}, question ${question})`,
    );
    return;
  }
  const answerApproval = {
    method: "POST",
    path: `/threads/${approvalThread}/pending-requests/${approval}/respond`,
    body: { decision: "accept" },
  };
  const dismissApproval = {
    method: "POST",
    path: `/threads/${approvalThread}/pending-requests/${approval}/respond`,
    body: { dismiss: true },
  };
  const dismissQuestion = {
    method: "POST",
    path: `/threads/${questionThread}/pending-requests/${question}/respond`,
    body: { dismiss: true },
  };
  const createThread = {
    method: "POST",
    path: "/threads",
    body: {
      projectId,
      threads: [{ title: "refused api thread", prompt: "@@reply refused", target: { providerInstanceId: "alpha" } }],
    },
  };
  const sendMessage = {
    method: "POST",
    path: `/threads/${questionThread}/messages`,
    body: { message: "@@reply refused api message", mode: "queue" },
  };
  const schedule = {
    method: "POST",
    path: "/scheduled-tasks",
    body: {
      projectId,
      title: "refused api schedule",
      prompt: "@@reply refused",
      schedule: { type: "interval", everyMs: 3_600_000 },
      target: { providerInstanceId: "alpha" },
    },
  };
  const interrupt = { method: "POST", path: `/threads/${approvalThread}/interrupt`, body: {} };

  const tryRequest = async (group, label, token, request) => {
    const answer = await api(server, request.method, request.path, {
      token,
      body: request.body,
      stream: request.stream,
    });
    attempts.record(
      API_FIGURE,
      group,
      `${label}: ${request.method} ${request.path.replace(/\?.*/, "")}`,
      served(answer),
      describeAnswer(answer),
    );
  };

  for (const request of [createThread, sendMessage, interrupt, schedule, answerApproval, dismissQuestion])
    await tryRequest("missing a verb", "read-only token", tokens["read only"].token, request);
  for (const request of [answerApproval, dismissApproval])
    await tryRequest(
      "missing a verb",
      "read+operate token (no approve)",
      tokens["read+operate (no approve)"].token,
      request,
    );
  for (const request of [createThread, sendMessage, interrupt, schedule, dismissQuestion])
    await tryRequest(
      "missing a verb",
      "read+approve token (no operate)",
      tokens["read+approve (no operate)"].token,
      request,
    );

  const elsewhere = tokens["another project's"].token;
  for (const request of [
    { method: "GET", path: `/threads?projectId=${encodeURIComponent(projectId)}` },
    { method: "GET", path: `/threads/${approvalThread}` },
    { method: "GET", path: `/threads/${approvalThread}/pending-requests` },
    { method: "GET", path: `/usage?projectId=${encodeURIComponent(projectId)}` },
    { method: "GET", path: `/scheduled-tasks?projectId=${encodeURIComponent(projectId)}` },
    { method: "GET", path: `/events?projectId=${encodeURIComponent(projectId)}&after=0`, stream: true },
    { method: "GET", path: `/events?threadId=${encodeURIComponent(approvalThread)}&after=0`, stream: true },
    createThread,
    sendMessage,
    answerApproval,
    schedule,
  ]) {
    await tryRequest("another project", "token scoped to another project", elsewhere, request);
  }

  const projects = { method: "GET", path: "/projects" };
  const threads = { method: "GET", path: `/threads?projectId=${encodeURIComponent(projectId)}` };
  const events = { method: "GET", path: "/events?after=0", stream: true };
  if (!served(await api(server, "GET", "/projects", { token: revoked.token })))
    attempts.notSetUp(API_FIGURE, "the token to revoke did not work before it was revoked");
  await revokeToken(home, revoked.id);
  await sleep(Math.max(0, expiresAt + 200 - Date.now()));
  for (const [label, token] of [
    ["revoked token", revoked.token],
    ["expired token", expired.token],
  ]) {
    for (const request of [projects, threads, events, createThread, answerApproval])
      await tryRequest(label.split(" ")[0], label, token, request);
  }

  // Effects, then the controls: the same answers, made with every verb, are served.
  const stillPending = async (threadId, requestId) =>
    (await api(server, "GET", `/threads/${threadId}/pending-requests/${requestId}`, { token: full.token })).json
      ?.status === "pending";
  if (!(await stillPending(approvalThread, approval)))
    attempts.record(API_FIGURE, "effects", "the approval is no longer pending", true);
  if (!(await stillPending(questionThread, question)))
    attempts.record(API_FIGURE, "effects", "the question is no longer pending", true);
  const refusedThreads = scalar(home, "SELECT COUNT(*) FROM threads WHERE title = 'refused api thread'");
  if (refusedThreads > 0) attempts.record(API_FIGURE, "effects", "a refused thread exists", true, `${refusedThreads}`);
  const refusedMessages = scalar(
    home,
    "SELECT COUNT(*) FROM items WHERE kind = 'user_message' AND json_extract(data, '$.text') = '@@reply refused api message'",
  );
  if (refusedMessages > 0)
    attempts.record(API_FIGURE, "effects", "a refused message was sent", true, `${refusedMessages}`);
  const refusedSchedules = scalar(
    home,
    "SELECT COUNT(*) FROM scheduled_tasks WHERE json_extract(data, '$.title') = 'refused api schedule'",
  );
  if (refusedSchedules > 0)
    attempts.record(API_FIGURE, "effects", "a refused schedule exists", true, `${refusedSchedules}`);
  for (const [label, request] of [
    ["answering the approval", answerApproval],
    ["dismissing the question", dismissQuestion],
  ]) {
    const answer = await api(server, request.method, request.path, { token: full.token, body: request.body });
    if (!served(answer))
      attempts.notSetUp(
        API_FIGURE,
        `${label} with every verb was not served either (${describeAnswer(answer)}): its refusals prove nothing`,
      );
  }
}
