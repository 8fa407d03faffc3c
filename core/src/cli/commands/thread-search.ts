import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import { printJson, printTable, style } from "../output.js";
import { withServer, type CommandAccess } from "../server-api.js";
import { projectIdOf } from "../thread-arguments.js";

const READ: CommandAccess = { verbs: ["orchestration:read"], command: "switchyard threads search" };

interface SearchHit {
  thread: { threadId: string; title: string; projectId: string };
  matchedIn: string;
  snippet: { text: string; highlights: { start: number; end: number }[] };
}

/** A thread's words on one line, without control characters (a message may hold terminal escapes). */
function oneLine(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f]+/g, " ");
}

/** The snippet with its matched words in bold (plain where the output is not a terminal). */
function highlighted(snippet: SearchHit["snippet"]): string {
  let out = "";
  let at = 0;
  for (const { start, end } of snippet.highlights) {
    if (start < at) continue;
    out += oneLine(snippet.text.slice(at, start)) + style(oneLine(snippet.text.slice(start, end)), "bold");
    at = end;
  }
  return out + oneLine(snippet.text.slice(at));
}

export function registerThreadSearch(threads: Command): void {
  threads
    .command("search <words...>")
    .description(
      "Threads whose title or messages (not tool output) hold every word, best match first, in every project (or --project)",
    )
    .option("--project <dir|id>", "only this project's threads (its folder or id)")
    .option("--subagents", "include delegated child threads")
    .option("--limit <n>", "at most this many per project (default 20)", (value) => {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 1 || n > 50)
        throw new InvalidArgumentError("--limit takes a whole number from 1 to 50.");
      return n;
    })
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(searchThreads);
}

/** `switchyard threads search <words...>`: the server's full-text search, project by project. */
async function searchThreads(
  words: string[],
  options: { project?: string; subagents?: boolean; limit?: number; home?: string; json?: boolean },
): Promise<void> {
  await withServer(options, READ, async (api, host) => {
    const projectIds =
      options.project !== undefined
        ? [await projectIdOf(host, options.project)]
        : (await api.call<{ projects: { projectId: string }[] }>("GET", "/projects")).projects.map((p) => p.projectId);
    const hits: SearchHit[] = [];
    for (const projectId of projectIds) {
      const query = new URLSearchParams({ projectId, q: words.join(" "), limit: String(options.limit ?? 20) });
      if (options.subagents) query.set("includeSubagents", "true");
      hits.push(...(await api.call<{ results: SearchHit[] }>("GET", `/threads/search?${query.toString()}`)).results);
    }
    if (options.json) {
      printJson(hits);
      return;
    }
    if (hits.length === 0) {
      process.stdout.write("No thread matches.\n");
      return;
    }
    printTable(
      ["THREAD", "TITLE", "WHERE", "MATCHED"],
      hits.map((hit) => [
        hit.thread.threadId,
        oneLine(hit.thread.title.length > 40 ? `${hit.thread.title.slice(0, 39)}…` : hit.thread.title),
        hit.matchedIn.replace("_", " "),
        highlighted(hit.snippet),
      ]),
    );
  });
}
