// A store in a process of its own on the contract suite's database, driven by JSON lines on
// stdin and answering one JSON line per request once what it did has committed, so a test can
// kill it with SIGKILL and check what survives. argv: <database file>
// Requests: {"op":"append","commandId":…,"upserts":[…]}, {"op":"enqueue","effect":{…},"nowMs":…},
// {"op":"claim","id":…,"nowMs":…}, {"op":"appendInOpenTransaction","commandId":…,"upserts":[…]} (answered
// once appended inside a `transactionAsync` that never ends), {"op":"appendUntilKilled"} (one item per commit, forever,
// each answered {"acked": <sequence>}),
// {"op":"execute","tag":…,"commandId":…,"operation":…,"request":…,"upserts":[…],"hold":bool} (a command run by the
// real engine, its handler writing `upserts` and answering `request`; answers carry the tag: {"phase":"starting"}
// just before the engine is called, {"phase":"holding"} when `hold` keeps the handler waiting inside its
// transaction, then {"phase":"done","outcome":…,"ran":bool} or {"phase":"failed","error":{code,message}}),
// {"op":"release","tag":…} (the held handler returns; no answer of its own).
import "reflect-metadata";
import { createInterface } from "node:readline";
import { TransactionalEngine } from "../../../dist/engine/engine.js";
import { Store } from "../../../dist/store/store.js";
import { randomIdAllocator } from "../../../dist/util/ids.js";

const store = new Store(process.argv[2]);
const now = new Date().toISOString();
const clock = { nowMs: () => Date.parse(now), nowIso: () => now };
const engine = new TransactionalEngine(store, clock, randomIdAllocator, []);
const answer = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);
/** Held handlers' releases, by tag. */
const releases = new Map();

async function execute({ tag, commandId, operation, request, upserts, hold }) {
  let ran = false;
  answer({ tag, phase: "starting" });
  try {
    const outcome = await engine.execute({
      commandId,
      operation,
      request,
      handle: async (ctx) => {
        ran = true;
        for (const { entity, record } of upserts) ctx.put(entity, record);
        if (hold) {
          const released = new Promise((resolve) => releases.set(tag, resolve));
          answer({ tag, phase: "holding" });
          await released;
        }
        return request;
      },
    });
    answer({ tag, phase: "done", outcome, ran });
  } catch (error) {
    answer({ tag, phase: "failed", error: { code: error.code ?? null, message: String(error.message) } });
  }
}

async function appendUntilKilled() {
  for (let n = 1; ; n += 1) {
    const [event] = store.transaction(() =>
      store.append(
        null,
        [
          {
            entity: "item",
            record: {
              id: `item:killed:${n}`,
              threadId: `thread:killed:${n % 5}`,
              runId: null,
              attemptId: null,
              position: n,
              kind: "assistant_message",
              status: "completed",
              text: `message ${n} `.repeat(20),
              data: {},
              createdBy: "provider",
              creationSource: "provider",
              createdAt: now,
              updatedAt: now,
            },
          },
        ],
        now,
      ),
    );
    answer({ acked: event.sequence });
    // Lets the checkpoint worker's replies in, so the kill may land during a checkpoint too.
    if (n % 32 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
}

for await (const line of createInterface({ input: process.stdin })) {
  const request = JSON.parse(line);
  if (request.op === "append")
    answer({
      sequences: store.transaction(() => store.append(request.commandId, request.upserts, now)).map((e) => e.sequence),
    });
  else if (request.op === "enqueue") {
    store.transaction(() => store.enqueueEffect(request.effect, request.nowMs, now));
    answer({ ok: true });
  } else if (request.op === "claim") answer({ claimed: store.claimEffect(request.id, request.nowMs) });
  else if (request.op === "appendInOpenTransaction")
    void store.transactionAsync(async () => {
      store.append(request.commandId, request.upserts, now);
      // Answered after an await, as work awaiting I/O mid-transaction would be.
      await new Promise((resolve) => setImmediate(resolve));
      answer({ appended: true });
      // Open until the kill: awaiting what never comes, as work awaiting a provider would.
      await new Promise(() => {});
    });
  else if (request.op === "appendUntilKilled") await appendUntilKilled();
  else if (request.op === "execute") void execute(request);
  else if (request.op === "release") releases.get(request.tag)?.();
  else answer({ error: `unknown op ${request.op}` });
}
