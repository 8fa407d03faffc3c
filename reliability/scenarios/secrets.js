// No secret anywhere but where it is meant to be kept, and nothing of a home open to other users.
// Runs last and reads what every scenario before it left, plus the connections it makes itself
// (`switchyard connect` for each harness, into harness homes under the run's root):
//
// - every file of every home, as raw bytes: the database, its WAL and shared memory, the
//   server's own log (logs/), connections/, keys/, caches, plugin data, the harness state
//   plugins keep there; every home the run made counts, the linked environments' included;
// - every other file under the run's root: harness homes (the configs `connect` wrote, the
//   scripted agents' state), workspaces, gates;
// - every server's captured stdout and stderr, and the command lines of harness processes
//   sampled while they ran.
//
// It looks for every secret the suite was issued or saw (client tokens, agents' credentials,
// link secrets, webhook secrets, web UI cookies) and for anything shaped like a Switchyard token
// (`sy_` and 43 base64url characters), which also catches credentials the suite never saw.
// Files made to hold a secret (a connection's token file, a link's secret file) must hold it
// (a control that the search sees it) and count only when they are open to others.
//
// Modes: every file under a home must be readable and writable by the user alone (no group or
// other bits: 0600, or less) and every folder 0700. The suite makes each home 0700 and writes
// config.json 0600 itself, so the figure is about what Switchyard creates; one home is created
// by Switchyard alone (`connect` on a path that does not exist yet).
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { switchyard } from "../lib/cli.js";
import { octalMode, walk } from "../lib/files.js";

const TOKEN_SHAPE = /sy_[A-Za-z0-9_-]{43}/g;
const HARNESSES = ["claude", "codex", "cursor", "opencode", "gemini", "pi"];
/** Files under a home whose job is to hold a secret (docs/connect.md, docs/reach.md). */
const SECRET_STORES = [/^connections\/[^/]+\.(token|headers\.json|state\.json)$/, /^keys\/links\/[^/]+\.secret$/];
/** Files larger than this are read in part only (none of the suite's are). */
const MAX_READ_BYTES = 256 * 1024 * 1024;

/** Token-shaped strings and known secrets in `text`. */
function secretsIn(text, known) {
  const found = new Set(text.match(TOKEN_SHAPE) ?? []);
  for (const secret of known) if (text.includes(secret)) found.add(secret);
  return found;
}

function readText(path, size) {
  if (size > MAX_READ_BYTES) return readFileSync(path).subarray(0, MAX_READ_BYTES).toString("latin1");
  return readFileSync(path).toString("latin1");
}

/** What kind of place a file in a home is, for the report. */
function homeKind(relativePath) {
  if (/^switchyard\.db(-wal|-shm|-journal)?$/.test(relativePath)) return "database";
  if (relativePath.startsWith("logs/")) return "log";
  if (relativePath.startsWith("connections/")) return "connections";
  return "home file";
}

/**
 * Connects every harness to a home Switchyard creates itself, with HOME and each harness's
 * config folder under the run's root (never the real ones). Returns the harness homes' root.
 */
async function connectEveryHarness(run, report) {
  const home = run.newHome("connect", { create: false });
  const harnessHomes = run.dir("connect-harness-homes");
  const env = {
    HOME: harnessHomes,
    SWITCHYARD_HOME: home,
    XDG_CONFIG_HOME: join(harnessHomes, ".config"),
    CODEX_HOME: join(harnessHomes, ".codex"),
    CLAUDE_CONFIG_DIR: join(harnessHomes, ".claude"),
    GEMINI_CLI_HOME: harnessHomes,
    PI_CODING_AGENT_DIR: join(harnessHomes, ".pi", "agent"),
  };
  let connected = 0;
  for (const harness of HARNESSES) {
    try {
      const answer = JSON.parse(
        await switchyard(["connect", harness, "--home", home, "--url", "http://127.0.0.1:9/mcp", "--json"], { env }),
      );
      connected += 1;
      if (existsSync(answer.secretFile))
        for (const token of readFileSync(answer.secretFile, "utf8").match(TOKEN_SHAPE) ?? []) run.tokens.add(token);
    } catch (error) {
      report.note(`switchyard connect ${harness} failed: ${error.message.split("\n")[0]}`);
    }
  }
  return { connected, harnessHomes };
}

export default {
  name: "secrets",
  title: "secrets outside their stores, and homes open to other users",
  timeoutMs: 120_000,
  async run(run, report) {
    const { connected } = await connectEveryHarness(run, report);

    /** `{ kind, name, text }` of every place searched; `stores` the files made to hold a secret. */
    const places = [];
    const stores = [];
    const openToOthers = [];
    let modeChecked = 0;
    const inHome = new Set();
    for (const home of run.homes) {
      for (const entry of walk(home)) {
        inHome.add(entry.path);
        if (entry.stat.isSymbolicLink()) continue;
        modeChecked += 1;
        if ((entry.stat.mode & 0o077) !== 0) openToOthers.push(`${entry.path} ${octalMode(entry.stat)}`);
        if (!entry.stat.isFile()) continue;
        const text = readText(entry.path, entry.stat.size);
        if (SECRET_STORES.some((pattern) => pattern.test(entry.relativePath))) stores.push({ name: entry.path, text });
        else places.push({ kind: homeKind(entry.relativePath), name: entry.path, text });
      }
    }
    const knownLeaks = new Set(run.knownLeaks);
    for (const entry of walk(run.root)) {
      if (inHome.has(entry.path) || !entry.stat.isFile() || entry.path.startsWith(`${run.logDir}/`)) continue;
      if ([...knownLeaks].some((dir) => entry.path.startsWith(`${dir}/`))) continue;
      places.push({ kind: "harness home or scratch", name: entry.path, text: readText(entry.path, entry.stat.size) });
    }
    for (const file of run.logFiles)
      if (existsSync(file)) places.push({ kind: "log", name: file, text: readFileSync(file, "utf8") });
    for (const harness of run.harnessArgv)
      places.push({ kind: "harness argv", name: `pid ${harness.pid}`, text: harness.argv.join(" ") });

    const kinds = ["database", "log", "connections", "home file", "harness home or scratch", "harness argv"];
    const hits = Object.fromEntries(kinds.map((kind) => [kind, 0]));
    for (const place of places) {
      const found = secretsIn(place.text, run.tokens);
      if (found.size === 0) continue;
      hits[place.kind] += found.size;
      report.note(`${found.size} secret(s) in ${place.kind} ${place.name}`);
    }
    const counts = kinds.map((kind) => `${places.filter((p) => p.kind === kind).length} ${kind}`).join(", ");
    report.note(
      `searched ${places.length} places (${counts}) for ${run.tokens.size} known secrets and any token-shaped string; ${stores.length} secret stores; ${connected} of ${HARNESSES.length} harnesses connected`,
    );

    // Controls: the search must find the secrets where they are known to be.
    let controlFailed = connected < HARNESSES.length;
    for (const store of stores) {
      if (secretsIn(store.text, run.tokens).size === 0) {
        controlFailed = true;
        report.note(
          `control failed: no secret found in ${store.name}, a file made to hold one; the search cannot be trusted`,
        );
      }
    }
    for (const dir of run.knownLeaks) {
      const leaked = readdirSync(dir).reduce(
        (n, file) => n + secretsIn(readFileSync(join(dir, file), "utf8"), run.tokens).size,
        0,
      );
      if (leaked === 0) {
        controlFailed = true;
        report.note(
          `control failed: no token found in ${dir}, where a harness leaked its credentials; the search cannot be trusted`,
        );
      }
    }
    const total = Object.values(hits).reduce((sum, n) => sum + n, 0);
    report.figure(
      "secrets outside their stores (every file of every home and harness home, server logs, harness argv)",
      `${total} (${kinds.map((kind) => `${hits[kind]} ${kind}`).join(", ")})`,
      "goal 0, with every secret store and known leak found by the same search",
      total === 0 && places.length > 0 && stores.length > 0 && !controlFailed,
    );

    for (const line of openToOthers.slice(0, process.env.RELIABILITY_VERBOSE ? 10_000 : 8))
      report.note(`open to others: ${line}`);
    if (openToOthers.length > 8 && !process.env.RELIABILITY_VERBOSE)
      report.note(`… and ${openToOthers.length - 8} more`);
    report.figure(
      "files and folders under every home open to other users",
      `${openToOthers.length} of ${modeChecked} in ${run.homes.length} homes`,
      "goal 0: files 0600, folders 0700",
      openToOthers.length === 0 && modeChecked > 0,
    );
  },
};
