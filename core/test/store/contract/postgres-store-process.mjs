// A PostgreSQL store in a process of its own on the contract suite's database, driven by JSON
// lines on stdin and answering one JSON line per request once what it did has committed, so a
// test can kill it with SIGKILL and check what survives. argv: <database URL>
// Requests (as sqlite-store-process.mjs's, without `execute`: no engine on PostgreSQL yet):
// {"op":"append","commandId":…,"upserts":[…]}, {"op":"enqueue","effect":{…},"nowMs":…},
// {"op":"claim","id":…,"nowMs":…}, {"op":"appendInOpenTransaction","commandId":…,"upserts":[…]}
// (answered once appended and flushed, uncommitted, inside a unit of work that never ends),
// {"op":"appendUntilKilled"} (one item per commit, forever, each answered {"acked": <sequence>}).
import { createInterface } from "node:readline";
import { openPostgresEventStore } from "../../../dist/store/postgres/index.js";

const store = await openPostgresEventStore(process.argv[2], { max: 4 });
const now = new Date().toISOString();
const answer = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);

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
  else answer({ error: `unknown op ${request.op}` });
}
