import { createHmac } from "node:crypto";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOKENS } from "../../src/host/tokens.js";
import type { CredentialCapability, ModeCeiling } from "../../src/services/credentials/mcp-session-registry.js";
import { ApiClient } from "../support/api-client.js";
import { connectMcp, mustCall } from "../support/mcp-client.js";
import { McpLab } from "../support/mcp-lab.js";
import { httpRequest } from "../support/http-request.js";
import { JumpClock } from "../support/jump-clock.js";
import { until } from "../support/until.js";
import { sqliteStore } from "../support/sqlite-store.js";

type Task = {
  scheduledTaskId: string;
  webhookUrl: string | null;
  webhookPath: string | null;
  webhookUrlHidden: boolean;
  warning: string | null;
  recentTriggers: { triggerId: string; outcome: string; reason: string | null }[];
};

/** The documented signature, computed here rather than by Switchyard's code. */
function signature(secret: string, body: string, timestamp: string): string {
  return `sha256=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;
}

describe("webhooks that cannot be abused: replays, a URL anyone can read, floods", () => {
  let lab: McpLab;
  let operator: Client;
  const tokenWith = (capabilities: CredentialCapability[], ceiling?: ModeCeiling) =>
    lab.registry.issueClientToken({ ttlMs: 3_600_000, capabilities, ...(ceiling ? { ceiling } : {}) }).token;

  beforeAll(async () => {
    lab = await McpLab.start({
      scheduling: { webhookReplayWindowMs: 60_000, webhookRateLimit: { requests: 3, windowMs: 60_000 } },
    });
    operator = await connectMcp(lab.server.mcpUrl, tokenWith(["orchestration:operate"]));
  });
  afterAll(async () => {
    await operator.close();
    await lab.stop();
  });

  const schedule = (args: Record<string, unknown>) =>
    mustCall<Task>(operator, "schedule_task", {
      projectId: lab.projectId,
      target: { providerInstanceId: "alpha" },
      prompt: "@@reply hooked @@wait 0",
      ...args,
    });
  const triggerCount = (id: string) => lab.host.store.count("scheduledTrigger", "task_id = ?", [id]);

  it("refuses a signed delivery replayed with its timestamp spelled another way, and records it once", async () => {
    const secret = "a signing secret of some length";
    const task = await schedule({ schedule: { type: "webhook", signature: { secret } } });
    const body = JSON.stringify({ action: "deployed" });
    const ts = String(Math.floor(Date.now() / 1000));
    const sig = signature(secret, body, ts);
    const first = await httpRequest(task.webhookUrl!, {
      headers: { "x-switchyard-timestamp": ts, "x-switchyard-signature": sig },
      body,
    });
    expect(first.status, first.text).toBe(202);

    // The attack: the HMAC check read the number (so "0"+ts verified), the replay check hashed
    // the raw header (so "0"+ts was new). Every other spelling is refused before anything runs.
    for (const spelled of [`0${ts}`, `00${ts}`, `+${ts}`, `${ts}.0`, `${ts}e0`]) {
      const replay = await httpRequest(task.webhookUrl!, {
        headers: { "x-switchyard-timestamp": spelled, "x-switchyard-signature": sig },
        body,
      });
      expect(replay.status, `${spelled}: ${replay.text}`).toBe(400);
      expect(replay.json).toMatchObject({ error: "timestamp_invalid" });
      expect(String(replay.json!.error_description)).toContain(JSON.stringify(spelled));
    }
    // The same signed content with the signature spelled in capitals is the same delivery.
    const upper = await httpRequest(task.webhookUrl!, {
      headers: { "x-switchyard-timestamp": ts, "x-switchyard-signature": `sha256=${sig.slice(7).toUpperCase()}` },
      body,
    });
    expect(upper).toMatchObject({ status: 409, json: { error: "replayed" } });
    expect(triggerCount(task.scheduledTaskId)).toBe(1);
  });

  it("shows an unsigned webhook's URL only to callers that may change the task; its id alone reaches nothing", async () => {
    const task = await schedule({ schedule: { type: "webhook" }, enabled: false });
    expect(task.webhookUrlHidden).toBe(false);
    expect(task.webhookPath).toMatch(new RegExp(`^/hooks/${task.scheduledTaskId}/[A-Za-z0-9_-]{32}$`));
    const signed = await schedule({ schedule: { type: "webhook", signature: "generate" } });

    // A read-only token, and an operator whose ceiling is narrower than the task's modes (it
    // could not change the task, so it must not trigger it at the task's full modes either).
    const reader = await connectMcp(lab.server.mcpUrl, tokenWith(["orchestration:read"]));
    const narrow = await connectMcp(
      lab.server.mcpUrl,
      tokenWith(["orchestration:operate"], { runtimeMode: "approval-required", interactionMode: "default" }),
    );
    try {
      for (const client of [reader, narrow]) {
        const listed = (await mustCall<{ tasks: Task[] }>(client, "list_scheduled_tasks", { projectId: lab.projectId }))
          .tasks;
        const hidden = listed.find((t) => t.scheduledTaskId === task.scheduledTaskId)!;
        expect(hidden).toMatchObject({ webhookUrl: null, webhookPath: null, webhookUrlHidden: true });
        expect(hidden.warning).toContain("only a caller that may change the task");
        // A signed task's URL is no credential (each request is signed): it stays visible.
        expect(listed.find((t) => t.scheduledTaskId === signed.scheduledTaskId)).toMatchObject({
          webhookUrlHidden: false,
          webhookPath: `/hooks/${signed.scheduledTaskId}`,
        });
        expect(JSON.stringify(listed)).not.toContain(task.webhookPath!.split("/").at(-1));
      }
    } finally {
      await reader.close();
      await narrow.close();
    }
    // The HTTP API hides it the same way.
    const api = new ApiClient(lab.server.apiUrl, tokenWith(["orchestration:read"]));
    const read = await api.get<Task>(`/scheduled-tasks/${task.scheduledTaskId}`);
    expect(read.body).toMatchObject({ webhookUrl: null, webhookPath: null, webhookUrlHidden: true });

    // What a reader can see (the task id, in runs, triggers and thread ids) does not reach it.
    const bare = await httpRequest(`${lab.server.url}/hooks/${task.scheduledTaskId}`, { body: "{}" });
    expect(bare.status, bare.text).toBe(403);
    expect(bare.json).toMatchObject({ error: "url_key_invalid" });
    const guessed = await httpRequest(`${lab.server.url}/hooks/${task.scheduledTaskId}/${"A".repeat(32)}`, {
      body: "{}",
    });
    expect(guessed).toMatchObject({ status: 403, json: { error: "url_key_invalid" } });
    expect(triggerCount(task.scheduledTaskId)).toBe(0);
    // Its own URL is taken (the task is paused, so the request is recorded as skipped).
    const own = await httpRequest(`${lab.server.url}${task.webhookPath}`, { body: "{}" });
    expect(own).toMatchObject({ status: 200, json: { status: "skipped", reason: "paused" } });
  });

  it("takes at most the configured number of requests per window, then answers 429 with Retry-After and records nothing", async () => {
    const task = await schedule({ schedule: { type: "webhook" }, enabled: false });
    for (let i = 0; i < 3; i += 1) {
      const answer = await httpRequest(task.webhookUrl!, { body: `{"n":${i}}` });
      expect(answer.status, answer.text).toBe(200);
    }
    const sequence = lab.host.store.lastSequence();
    const flooded = await httpRequest(task.webhookUrl!, { body: '{"n":3}' });
    expect(flooded.status, flooded.text).toBe(429);
    expect(flooded.json).toMatchObject({ error: "rate_limited" });
    expect(String(flooded.json!.error_description)).toContain("scheduling.webhookRateLimit");
    const retryAfter = Number(flooded.headers["retry-after"]);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(flooded.json!.retryAfterSeconds).toBe(retryAfter);
    expect(triggerCount(task.scheduledTaskId)).toBe(3);
    expect(lab.host.store.lastSequence()).toBe(sequence);
    // Another task has its own budget.
    const other = await schedule({ schedule: { type: "webhook" }, enabled: false });
    expect((await httpRequest(other.webhookUrl!, { body: "{}" })).status).toBe(200);
  });
});

describe("trigger retention", () => {
  let lab: McpLab;
  let operator: Client;
  const clock = new JumpClock();

  beforeAll(async () => {
    lab = await McpLab.start({
      scheduling: {
        webhookReplayWindowMs: 60_000,
        webhookRateLimit: { requests: 100, windowMs: 60_000 },
        triggerRetention: { maxPerTask: 3, maxAgeMs: 86_400_000 },
      },
      overrides: (c) => c.register(TOKENS.Clock, { useValue: clock }),
    });
    operator = await connectMcp(
      lab.server.mcpUrl,
      lab.registry.issueClientToken({ ttlMs: 30 * 86_400_000, capabilities: ["orchestration:operate"] }).token,
    );
  });
  afterAll(async () => {
    await operator.close();
    await lab.stop();
  });

  const triggerIds = (id: string) =>
    lab.host.store.select("scheduledTrigger", "task_id = ?", [id], "ORDER BY created_at, rowid").map((t) => t.id);
  const eventsOf = (triggerId: string) =>
    (
      sqliteStore(lab.host.store)
        .db.prepare("SELECT COUNT(*) AS n FROM events WHERE entity = 'scheduledTrigger' AND entity_id = ?")
        .get(triggerId) as { n: number }
    ).n;
  const receiptOf = (triggerId: string) => lab.host.store.getReceipt(`cmd:scheduled_task.webhook:${triggerId}`);

  it("keeps a task's newest triggers and never one whose run has not finished; pruned ones leave the log, their receipts and the projection alike", async () => {
    const task = await mustCall<Task>(operator, "schedule_task", {
      projectId: lab.projectId,
      target: { providerInstanceId: "alpha" },
      prompt: "@@gate retention-held @@reply held-done",
      schedule: { type: "webhook" },
    });
    const post = async (n: number) => {
      const answer = await httpRequest(task.webhookUrl!, { body: `{"n":${n}}` });
      expect([200, 202], answer.text).toContain(answer.status);
      return answer;
    };
    const started = await post(0);
    expect(started.status).toBe(202);
    const startedTrigger = started.json!.triggerId as string;
    const runId = started.json!.runId as string;
    await lab.waitForLiveTurn(started.json!.threadId as string);
    // A flood while the run is held: each request is an overlap skip, recorded.
    for (let n = 1; n <= 5; n += 1)
      expect((await post(n)).json).toMatchObject({ status: "skipped", reason: "overlap" });
    const flood = triggerIds(task.scheduledTaskId);
    expect(flood).toHaveLength(6);
    for (const id of flood) expect(eventsOf(id)).toBe(1);

    // Past the windows that still read them (replay, rate), the next request prunes down to the
    // newest three, keeping the trigger whose run is still held.
    clock.advance(2 * 60_000);
    await post(6);
    const kept = triggerIds(task.scheduledTaskId);
    expect(kept).toContain(startedTrigger);
    expect(kept).toHaveLength(4);
    const pruned = flood.filter((id) => !kept.includes(id));
    expect(pruned).toHaveLength(3);
    for (const id of pruned) {
      expect(eventsOf(id)).toBe(0);
      expect(receiptOf(id)).toBeNull();
    }
    expect(receiptOf(kept.at(-1)!)).not.toBeNull();
    expect(lab.host.store.get("run", runId)!.scheduledTriggerId).toBe(startedTrigger);

    // Once its run finished, it goes too; the run and its thread stay.
    lab.release("retention-held");
    const done = await lab.host.threads.waitForRun({
      threadId: started.json!.threadId as string,
      runId,
      timeoutMs: 20_000,
    });
    expect(done.run!.status).toBe("completed");
    clock.advance(2 * 60_000);
    await post(7);
    await until(
      "the finished run's trigger to be pruned",
      () => !triggerIds(task.scheduledTaskId).includes(startedTrigger),
    );
    expect(lab.host.store.get("run", runId)).toMatchObject({
      status: "completed",
      scheduledTaskId: task.scheduledTaskId,
    });

    // The log holds exactly what the projection does: a rebuild gives the same triggers.
    const [before, after] = await lab.host.store.writeAsync(() => {
      const listed = triggerIds(task.scheduledTaskId);
      lab.host.store.rebuildProjections();
      return [listed, triggerIds(task.scheduledTaskId)];
    });
    expect(after).toEqual(before);

    // Past maxAgeMs, the scheduler's housekeeping removes the rest once their runs finished.
    for (const trigger of lab.host.store.select("scheduledTrigger", "task_id = ? AND run_id IS NOT NULL", [
      task.scheduledTaskId,
    ])) {
      await lab.host.threads.waitForRun({ threadId: trigger.threadId!, runId: trigger.runId!, timeoutMs: 20_000 });
    }
    clock.advance(2 * 86_400_000);
    await until("triggers older than maxAgeMs to be pruned", () => triggerIds(task.scheduledTaskId).length === 0);
  });
});
