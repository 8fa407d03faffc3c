// No secret in the database, the logs or a harness's argv. Runs last and reads what every
// scenario before it left: each home's SQLite files (the database, its WAL and shared memory,
// as raw bytes), every server's stdout and stderr, and the command lines of harness processes
// sampled while they ran. It looks for every token the suite was issued or captured, and for
// anything shaped like a Switchyard token (`sy_` and 43 base64url characters), which also
// catches provider-session tokens the suite never saw.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { dbFile } from "../lib/db.js";

const TOKEN_SHAPE = /sy_[A-Za-z0-9_-]{43}/g;

/** Token-shaped strings and known tokens in `text`. */
function secretsIn(text, known) {
  const found = new Set(text.match(TOKEN_SHAPE) ?? []);
  for (const token of known) if (text.includes(token)) found.add(token);
  return found;
}

export default {
  name: "secrets",
  title: "secrets in the database, logs and harness argv",
  timeoutMs: 60_000,
  async run(run, report) {
    const places = [];
    for (const home of run.homes) {
      for (const file of [dbFile(home), `${dbFile(home)}-wal`, `${dbFile(home)}-shm`]) {
        if (existsSync(file)) places.push({ kind: "database", name: file, text: readFileSync(file).toString("latin1") });
      }
    }
    for (const file of run.logFiles) if (existsSync(file)) places.push({ kind: "log", name: file, text: readFileSync(file, "utf8") });
    for (const harness of run.harnessArgv) places.push({ kind: "harness argv", name: `pid ${harness.pid}`, text: harness.argv.join(" ") });

    const hits = { database: 0, log: 0, "harness argv": 0 };
    for (const place of places) {
      const found = secretsIn(place.text, run.tokens);
      if (found.size === 0) continue;
      hits[place.kind] += found.size;
      report.note(`${found.size} secret(s) in ${place.kind} ${place.name}`);
    }
    const counts = Object.fromEntries(["database", "log", "harness argv"].map((kind) => [kind, places.filter((p) => p.kind === kind).length]));
    report.note(`searched ${counts.database} database files, ${counts.log} log files and ${counts["harness argv"]} harness command lines for ${run.tokens.size} known tokens and any token-shaped string`);
    // A control: the search must find the tokens a harness is known to have leaked.
    let controlFailed = false;
    for (const dir of run.knownLeaks) {
      const leaked = readdirSync(dir).reduce((n, file) => n + secretsIn(readFileSync(join(dir, file), "utf8"), run.tokens).size, 0);
      if (leaked === 0) {
        controlFailed = true;
        report.note(`control failed: no token found in ${dir}, where a harness leaked its credentials; the search cannot be trusted`);
      }
    }
    const total = hits.database + hits.log + hits["harness argv"];
    report.figure(
      "secrets in the database, logs and harness argv",
      `${total} (${hits.database} database, ${hits.log} logs, ${hits["harness argv"]} argv)`,
      "goal 0",
      total === 0 && places.length > 0 && !controlFailed,
    );
  },
};
