// A PostgreSQL store in a process of its own on the contract suite's database, driven by JSON
// lines on stdin and answering one JSON line per request once what it did has committed, so a
// test can kill it with SIGKILL and check what survives. argv: <database URL>
// Requests (as sqlite-store-process.mjs's; `execute` runs the engine's command processing on this store):
// {"op":"append","commandId":…,"upserts":[…]}, {"op":"enqueue","effect":{…},"nowMs":…},
// {"op":"claim","id":…,"nowMs":…}, {"op":"appendInOpenTransaction","commandId":…,"upserts":[…]}
// (answered once appended and flushed, uncommitted, inside a unit of work that never ends),
// {"op":"appendUntilKilled"} (one item per commit, forever, each answered {"acked": <sequence>}).
import { createInterface } from "node:readline";
import { CommandProcessor, engineHooks } from "../../../dist/engine/command-processor.js";
import { openPostgresEventStore } from "../../../dist/store/postgres/index.js";
import { randomIdAllocator } from "../../../dist/util/ids.js";

const store = await openPostgresEventStore(process.argv[2], { max: 4 });
const now = new Date().toISOString();
const clock = { nowMs: () => Date.parse(now), nowIso: () => now };
const engine = new CommandProcessor(store, clock, randomIdAllocator, engineHooks([]));
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
          // Its writes reach the server before it holds, uncommitted, as a handler's read would send them.
          await ctx.get(upserts[0].entity, upserts[0].record.id);
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
    const [event] = await store.transaction((work) =>
      work.append(
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
  }
}

for await (const line of createInterface({ input: process.stdin })) {
  const request = JSON.parse(line);
  if (request.op === "append") {
    const events = await store.transaction((work) => work.append(request.commandId, request.upserts, now));
    answer({ sequences: events.map((event) => event.sequence) });
  } else if (request.op === "enqueue") {
    await store.transaction((work) => work.enqueueEffect(request.effect, request.nowMs, now));
    answer({ ok: true });
  } else if (request.op === "claim") answer({ claimed: await store.claimEffect(request.id, request.nowMs) });
  else if (request.op === "appendInOpenTransaction")
    void store.transactionAsync(async (work) => {
      work.append(request.commandId, request.upserts, now);
      // A read of the unit flushes its writes: the server holds them, uncommitted, at the kill.
      await work.get(request.upserts[0].entity, request.upserts[0].record.id);
      answer({ appended: true });
      // Open until the kill: awaiting what never comes, as work awaiting a provider would.
      await new Promise(() => {});
    });
  else if (request.op === "appendUntilKilled") await appendUntilKilled();
  else if (request.op === "execute") void execute(request);
  else if (request.op === "release") releases.get(request.tag)?.();
  else answer({ error: `unknown op ${request.op}` });
}
