// Deliveries to a signed webhook that must not start a run: unsigned, signed with another
// secret, signed over another body, signed too long ago, and a captured delivery replayed as it
// was and with its timestamp zero-padded ("0" + ts: the same number, so the same signature).
// One correctly signed delivery first is the control: it must start a run, or the refusals
// prove nothing. Counted by HTTP status (202 means a run started) and by the task's started
// triggers in the database (exactly the control's one).
//
// Main's code takes the zero-padded replay as a new delivery (the signature check parses the
// number, the replay check hashes the raw string), so this figure misses there until the fix
// lands (issue 28, item 2).
import { createHmac } from "node:crypto";
import { api, describeAnswer, served } from "../api.js";
import { issueToken } from "../cli.js";
import { scalar } from "../db.js";
import { rawRequest } from "../mcp.js";

export const WEBHOOK_FIGURE = "webhooks";

const sign = (secret, timestamp, body) =>
  `sha256=${createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest("hex")}`;

export async function tryWebhooks({ run, home, server, attempts, projectId }) {
  const { token } = await issueToken(run, home, { verbs: "read,operate" });
  const created = await api(server, "POST", "/scheduled-tasks", {
    token,
    body: {
      projectId,
      title: "signed webhook",
      prompt: "@@reply webhook run",
      schedule: { type: "webhook", signature: "generate" },
      target: { providerInstanceId: "alpha" },
    },
  });
  if (!served(created) || typeof created.json?.signatureSecret !== "string") {
    attempts.notSetUp(
      WEBHOOK_FIGURE,
      `the signed webhook task could not be created (${describeAnswer(created)} ${created.body.slice(0, 200)})`,
    );
    return;
  }
  const { scheduledTaskId, webhookPath, signatureSecret } = created.json;
  run.tokens.add(signatureSecret);
  const url = `${server.url}${webhookPath}`;
  const deliver = (timestamp, signature, body) =>
    rawRequest(url, {
      headers: {
        "content-type": "application/json",
        ...(timestamp === null ? {} : { "x-switchyard-timestamp": timestamp }),
        ...(signature === null ? {} : { "x-switchyard-signature": signature }),
      },
      body,
    });
  const started = () =>
    scalar(home, "SELECT COUNT(*) FROM scheduled_triggers WHERE task_id = ? AND outcome = 'started'", scheduledTaskId);

  const body = JSON.stringify({ action: "opened", number: 1 });
  const now = String(Math.floor(Date.now() / 1000));
  const signature = sign(signatureSecret, now, body);
  const control = await deliver(now, signature, body);
  if (control.status !== 202 || started() !== 1) {
    attempts.notSetUp(
      WEBHOOK_FIGURE,
      `a correctly signed delivery did not start a run (HTTP ${control.status} ${control.body.slice(0, 200)}; ${started()} started)`,
    );
    return;
  }

  const fresh = String(Math.floor(Date.now() / 1000));
  const otherBody = JSON.stringify({ action: "closed", number: 2 });
  const old = String(Math.floor(Date.now() / 1000) - 3_600);
  for (const [group, label, request] of [
    ["forged", "no signature", [null, null, otherBody]],
    [
      "forged",
      "a signature made with another secret",
      [fresh, sign("not-the-task-secret-0123456789", fresh, otherBody), otherBody],
    ],
    ["forged", "the signature of another body", [fresh, sign(signatureSecret, fresh, body), otherBody]],
    ["forged", "a correct signature an hour old", [old, sign(signatureSecret, old, otherBody), otherBody]],
    ["replayed", "the captured delivery sent again", [now, signature, body]],
    ["replayed", "the captured delivery with its timestamp zero-padded", [`0${now}`, signature, body]],
    ["replayed", "the captured delivery with its timestamp padded with two zeros", [`00${now}`, signature, body]],
    [
      "replayed",
      "the captured delivery with its signature in capitals",
      [now, signature.toUpperCase().replace("SHA256=", "sha256="), body],
    ],
  ]) {
    const answer = await deliver(...request);
    attempts.record(
      WEBHOOK_FIGURE,
      group,
      label,
      answer.status === 202,
      `HTTP ${answer.status}${answer.error ? ` ${answer.error}` : ` ${answer.body.slice(0, 80)}`}`,
    );
  }
  const runs = started();
  if (runs !== 1)
    attempts.record(WEBHOOK_FIGURE, "effects", "runs the webhook started besides the control's", true, `${runs - 1}`);
}
