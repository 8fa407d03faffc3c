import { inject, injectable } from "tsyringe";
import { type Engine, EngineToken } from "../engine/ports.js";
import { OrchestratorFailure } from "../engine/orchestrator-failure.js";
import type { ThreadRecord, TimelineItemKind, TimelineItemRecord } from "../store/records.js";
import { ItemsTable } from "../store/tables/items.js";
import {
  SNIPPET_MATCH_END,
  SNIPPET_MATCH_START,
  ThreadSearchTable,
  type ThreadSearchSource,
} from "../store/tables/thread-search.js";
import { ThreadsTable, type ThreadShellFacts } from "../store/tables/threads.js";
import type { Caller } from "./caller.js";
import { CallerContext } from "./caller-context.js";
import { LiveWaits } from "./live-waits.js";
import { ThreadLinks } from "./thread-links.js";
import {
  itemPart,
  itemView,
  runView,
  threadShell,
  type ItemPart,
  type ItemView,
  type ThreadShell,
} from "./thread-views.js";
import { nativeSubagentsOfThread, type NativeSubagentView } from "./native-subagents.js";
import { UsageService, type TreeUsage, type UsageTotals } from "./usage/usage-service.js";
import { workspaceOf, workspaceView, type WorkspaceView } from "./workspaces/workspace-records.js";

/** The most threads a listing page holds as shells (t3_thread_list's limit). */
export const THREAD_PAGE_MAX = 100;

/**
 * The most threads a listing page holds as rows (listThreads view=row): a row is about half a
 * shell's bytes, and a list that shows a thousand threads then reads them in one request, not ten.
 */
export const THREAD_ROW_PAGE_MAX = 1_000;

/** t3_thread_list input. */
export interface ListThreadsInput {
  readonly projectId?: string | undefined;
  readonly title?: string | undefined;
  readonly runStatus?: readonly string[] | undefined;
  readonly includeSubagents?: boolean | undefined;
  readonly snoozed?: boolean | undefined;
  readonly settled?: boolean | undefined;
  readonly limit?: number | undefined;
  readonly offset?: number | undefined;
  /** row: the caller answers with rows (listThreads view=row), so a page may hold up to {@link THREAD_ROW_PAGE_MAX}. */
  readonly view?: "shell" | "row" | undefined;
}

/** searchThreads input. */
export interface SearchThreadsInput {
  readonly projectId?: string | undefined;
  readonly q: string;
  readonly includeSubagents?: boolean | undefined;
  readonly limit?: number | undefined;
  readonly offset?: number | undefined;
}

/** A search snippet as plain text and the ranges of it that matched. */
export interface SearchSnippet {
  readonly text: string;
  readonly highlights: { readonly start: number; readonly end: number }[];
}

/** Splits a snippet the store marked into its text and the ranges the markers enclosed. */
export function searchSnippet(marked: string): SearchSnippet {
  let text = "";
  const highlights: { start: number; end: number }[] = [];
  let start: number | null = null;
  for (const char of marked) {
    if (char === SNIPPET_MATCH_START) start = text.length;
    else if (char === SNIPPET_MATCH_END) {
      if (start !== null && text.length > start) highlights.push({ start, end: text.length });
      start = null;
    } else text += char;
  }
  return { text, highlights };
}

/** t3_thread_read input. */
export interface ReadThreadInput {
  readonly threadId: string;
  readonly view?: "messages" | "activity" | undefined;
  readonly beforePosition?: number | undefined;
  readonly afterPosition?: number | undefined;
  readonly limit?: number | undefined;
  readonly maxChars?: number | undefined;
}

/** The item read's input: one part of one item, a page of characters at a time. */
export interface ReadItemPartInput {
  readonly threadId: string;
  readonly itemId: string;
  readonly part?: ItemPart | undefined;
  readonly offset?: number | undefined;
  readonly limit?: number | undefined;
}

/** The longest page of an item's part one read answers. */
export const ITEM_PART_PAGE_CHARS = 20_000;

const MESSAGE_KINDS: readonly TimelineItemKind[] = ["user_message", "assistant_message", "proposed_plan"];
const ITEM_TEXT_LIMIT = 4_000;
export const DEFAULT_READ_CHARS = 30_000;

/**
 * Reads for every transport: thread listing (one project, newest first, offset paging; deleted
 * threads never listed) and incremental timeline reads bounded in items and characters.
 */
@injectable()
export class ThreadQueryService {
  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    private readonly callers: CallerContext,
    private readonly liveWaits: LiveWaits,
    private readonly usage: UsageService,
    private readonly links: ThreadLinks,
  ) {}

  /**
   * A thread's shell as list and read results show it, at `nowIso` (now unless a listing gives
   * the one moment its page is read at), from `facts` a listing read for its page.
   */
  async shell(
    thread: ThreadRecord,
    facts?: ThreadShellFacts,
    nowIso = this.engine.clock.nowIso(),
  ): Promise<ThreadShell> {
    const shell = await threadShell(
      this.engine.reader,
      this.liveWaits,
      thread,
      this.links.environmentId,
      nowIso,
      facts,
    );
    const webUrl = this.links.webUrl(thread.id);
    return webUrl === undefined ? shell : { ...shell, webUrl };
  }

  /** How many threads a project holds, sub-agents' included: what a listing with includeSubagents counts. */
  async threadCount(projectId: string): Promise<number> {
    return new ThreadsTable(this.engine.store).listingCount(projectId, { includeSubagents: true });
  }

  async list(caller: Caller, input: ListThreadsInput) {
    const projectId = await this.callers.project(caller, input.projectId);
    const limit = Math.min(
      Math.max(input.limit ?? 20, 1),
      input.view === "row" ? THREAD_ROW_PAGE_MAX : THREAD_PAGE_MAX,
    );
    const offset = Math.max(input.offset ?? 0, 0);
    const title = input.title?.toLowerCase();
    const listing = { includeSubagents: input.includeSubagents === true };
    const filtersOnShells =
      (input.runStatus !== undefined && input.runStatus.length > 0) ||
      input.snoozed !== undefined ||
      input.settled !== undefined;
    const store = this.engine.store;
    const threads = new ThreadsTable(store);
    let total: number;
    let page: ThreadShell[];
    if (!filtersOnShells && title === undefined) {
      // The common call: SQLite counts and pages, so a call costs its page, not the project (a
      // project of 10,000 threads read and parsed all 10,000 records per call).
      const records = await threads.listingPage(projectId, listing, limit, offset);
      const facts = await threads.shellFacts(records.map((thread) => thread.id));
      // One moment for the page (a clock read per shell was a tenth of a 1,000-row page's time).
      const now = this.engine.clock.nowIso();
      page = [];
      for (const thread of records) page.push(await this.shell(thread, facts.get(thread.id), now));
      // A short page that starts inside the list ends it: it already says how many there are.
      total =
        page.length < limit && (page.length > 0 || offset === 0)
          ? offset + page.length
          : await threads.listingCount(projectId, listing);
    } else {
      // A title filter runs on the title column alone (JavaScript's case folding, which SQLite's
      // lower() lacks beyond ASCII); only the records that can be listed are read.
      const ids = (await threads.listingTitles(projectId, listing))
        .filter((row) => title === undefined || row.title.toLowerCase().includes(title))
        .map((row) => row.id);
      const shellsOf = async (some: readonly string[]) => {
        const shells = [];
        for (const id of some) shells.push(await this.shell((await this.engine.reader.get("thread", id))!));
        return shells;
      };
      if (filtersOnShells) {
        // A run status, snooze or settle filter needs every candidate's shell.
        const shells = (await shellsOf(ids)).filter(
          (shell) =>
            (input.runStatus === undefined ||
              input.runStatus.length === 0 ||
              input.runStatus.includes(shell.status) ||
              (shell.status === "starting" && input.runStatus.includes("running"))) &&
            (input.snoozed === undefined || shell.snoozed === input.snoozed) &&
            (input.settled === undefined || shell.settled === input.settled),
        );
        total = shells.length;
        page = shells.slice(offset, offset + limit);
      } else {
        total = ids.length;
        page = await shellsOf(ids.slice(offset, offset + limit));
      }
    }
    return {
      projectId,
      threads: page,
      total,
      offset,
      limit,
      hasMore: offset + page.length < total,
      nextOffset: offset + page.length < total ? offset + page.length : null,
    };
  }

  /**
   * searchThreads: a page of the project's threads whose title or messages hold every word of
   * the query, best match first. The project is resolved and authorized as `list` does it. The
   * index catches up with every committed message first.
   */
  async search(caller: Caller, input: SearchThreadsInput) {
    const projectId = await this.callers.project(caller, input.projectId);
    if (input.q.trim() === "")
      throw new OrchestratorFailure("invalid_request", "q: give at least one word to search for.", { field: "q" });
    const limit = Math.min(Math.max(input.limit ?? 20, 1), 50);
    const offset = Math.max(input.offset ?? 0, 0);
    const listing = { includeSubagents: input.includeSubagents === true };
    // One more than the page tells whether another page follows without counting every match.
    const hits = await new ThreadSearchTable(this.engine.store).page(projectId, listing, input.q, limit + 1, offset);
    const pageHits = hits.slice(0, limit);
    const facts = await new ThreadsTable(this.engine.store).shellFacts(pageHits.map((hit) => hit.threadId));
    // A thread forgotten or deleted since the page was read (the catch-up may have waited its
    // turn behind a command) is left out rather than answered without a record.
    const results = [];
    for (const hit of pageHits) {
      const thread = await this.engine.reader.get("thread", hit.threadId);
      if (thread === null || thread.deletedAt !== null) continue;
      results.push({
        thread: await this.shell(thread, facts.get(hit.threadId)),
        matchedIn: hit.matchedIn as ThreadSearchSource,
        itemId: hit.itemId,
        position: hit.position,
        snippet: searchSnippet(hit.snippet),
      });
    }
    const hasMore = hits.length > limit;
    return {
      projectId,
      query: input.q,
      results,
      offset,
      limit,
      hasMore,
      nextOffset: hasMore ? offset + results.length : null,
    };
  }

  async read(caller: Caller, input: ReadThreadInput) {
    const thread = await this.engine.reader.get("thread", input.threadId);
    if (thread === null || thread.deletedAt !== null)
      throw new OrchestratorFailure("thread_not_found", `Thread ${input.threadId} does not exist.`, {
        threadId: input.threadId,
      });
    if (input.afterPosition !== undefined && input.beforePosition !== undefined) {
      throw new OrchestratorFailure("invalid_request", "Pass afterPosition or beforePosition, not both.");
    }
    const view = input.view ?? "messages";
    const limit = Math.min(Math.max(input.limit ?? 50, 1), 200);
    const maxChars = Math.min(Math.max(input.maxChars ?? DEFAULT_READ_CHARS, 2_000), 100_000);
    const kinds = view === "messages" ? MESSAGE_KINDS : null;
    // Agents read the newest items first; client callers (CLI, linked environments, outside
    // MCP clients) start at the oldest, because older clients read that way and follow hasMore.
    const ascending =
      input.afterPosition !== undefined || (input.beforePosition === undefined && caller.kind !== "agent");
    const boundary = ascending ? (input.afterPosition ?? -1) : (input.beforePosition ?? Number.MAX_SAFE_INTEGER);
    const timeline = new ItemsTable(this.engine.store);
    const rows = await timeline.page(thread.id, kinds, ascending ? "after" : "before", boundary, limit + 1);
    let shell = await this.shell(thread);
    const runs: (ReturnType<typeof runView> & { usage?: UsageTotals })[] = [];
    // One after another, newest first (each run's usage is a read).
    for (const run of await this.engine.reader.select(
      "run",
      "thread_id = ?",
      [thread.id],
      "ORDER BY ordinal DESC LIMIT 5",
    ))
      runs.push({ ...runView(run, Math.min(2_000, Math.floor(maxChars / 20))), usage: await this.usage.run(run.id) });
    let runList = runs;
    let usage: TreeUsage | undefined = await this.usage.thread(thread.id);
    let nativeSubagents: NativeSubagentView[] | undefined = await nativeSubagentsOfThread(this.engine.store, thread.id);
    if (nativeSubagents.length === 0) nativeSubagents = undefined;
    const changes = compactChanges(await workspaceOf(this.engine.reader, thread.id));
    const greedy: { record: TimelineItemRecord; view: ItemView }[] = [];
    let size = JSON.stringify({ thread: shell, runs: runList, usage, nativeSubagents, changes }).length + 400;
    for (const row of rows.slice(0, limit)) {
      const record = JSON.parse(row.data) as TimelineItemRecord;
      const view = itemView(record, Math.min(ITEM_TEXT_LIMIT, Math.max(200, maxChars - size - 500)));
      const entrySize = JSON.stringify(view).length + 1;
      if (size + entrySize > maxChars && greedy.length > 0) break;
      greedy.push({ record, view });
      size += entrySize;
    }
    let moreInDirection = rows.length > greedy.length;
    const countWhere = (op: "<" | ">", position: number) =>
      timeline.countBeyond(thread.id, kinds, op === ">" ? "after" : "before", position);
    const assemble = async () => {
      const items = greedy.map((entry) => entry.view);
      if (!ascending) items.reverse();
      const first = items[0]?.position ?? null;
      const last = items[items.length - 1]?.position ?? null;
      // Counted only where the page does not tell (as before), older first.
      const olderExist =
        first === null
          ? ascending
            ? false
            : (await countWhere("<", boundary)) > 0
          : (await countWhere("<", first)) > 0;
      const newerExist = ascending ? moreInDirection : last === null ? false : (await countWhere(">", last)) > 0;
      return {
        thread: shell,
        runs: runList,
        view,
        items,
        /** Pass as beforePosition to read older items; null when there are none. */
        earlierPosition: olderExist ? first : null,
        /** Pass as afterPosition to read newer items. */
        nextPosition: last ?? (ascending ? (input.afterPosition ?? -1) : null),
        hasMore: newerExist,
        truncatedItems: items.filter((item) => item.truncated).length,
        characterBudget: maxChars,
        ...(usage !== undefined ? { usage } : {}),
        ...(nativeSubagents !== undefined ? { nativeSubagents } : {}),
        ...(changes !== null ? { changes } : {}),
      };
    };
    // The result must fit the budget exactly (agents' harnesses drop larger results): drop the
    // farthest items, then the runs' usage, then older runs, then the native sub-agents (the
    // oldest first), then the thread's usage, then cut the one remaining item's text, then the
    // shell's web URL (its link, the seed's, stays).
    let result = await assemble();
    for (
      let excess = JSON.stringify(result).length - maxChars;
      excess > 0;
      excess = JSON.stringify(result).length - maxChars
    ) {
      if (greedy.length > 1) {
        greedy.pop();
        moreInDirection = true;
      } else if (runList.some((run) => run.usage !== undefined)) {
        runList = runList.map(({ usage: _dropped, ...run }) => run);
      } else if (runList.length > 1) {
        runList = runList.slice(0, runList.length - 1);
      } else if (nativeSubagents !== undefined) {
        nativeSubagents = nativeSubagents.length > 1 ? nativeSubagents.slice(1) : undefined;
      } else if (usage !== undefined) {
        usage = undefined;
      } else if (greedy.length === 1 && greedy[0]!.view.text.length > 50) {
        const entry = greedy[0]!;
        entry.view = itemView(entry.record, Math.max(0, entry.view.text.length - excess - 20));
      } else if (shell.webUrl !== undefined) {
        const { webUrl: _dropped, ...withoutWebUrl } = shell;
        shell = withoutWebUrl;
      } else {
        break;
      }
      result = await assemble();
    }
    return result;
  }

  /**
   * One part of an item whole, a page at a time (what a thread read cut short: a long message,
   * a tool call's output or arguments). Null when the thread has no such item; a part the item
   * does not have is an empty page.
   */
  async readItemPart(input: ReadItemPartInput) {
    const thread = await this.engine.reader.get("thread", input.threadId);
    if (thread === null || thread.deletedAt !== null)
      throw new OrchestratorFailure("thread_not_found", `Thread ${input.threadId} does not exist.`, {
        threadId: input.threadId,
      });
    const item = await this.engine.reader.get("item", input.itemId);
    if (item === null || item.threadId !== thread.id) return null;
    const part = input.part ?? "text";
    const whole = itemPart(item, part) ?? "";
    const offset = Math.min(Math.max(input.offset ?? 0, 0), whole.length);
    const limit = Math.min(Math.max(input.limit ?? ITEM_PART_PAGE_CHARS, 1), ITEM_PART_PAGE_CHARS);
    const text = whole.slice(offset, offset + limit);
    const end = offset + text.length;
    return {
      threadId: thread.id,
      itemId: item.id,
      kind: item.kind,
      status: item.status,
      part,
      offset,
      text,
      totalChars: whole.length,
      nextOffset: end < whole.length ? end : null,
    };
  }
}

/** A thread's workspace as a read shows it: the first 20 changed files by name (read_changes has them all). */
function compactChanges(workspace: Parameters<typeof workspaceView>[0] | null): WorkspaceView | null {
  if (workspace === null) return null;
  const view = workspaceView(workspace);
  return view.changes === null
    ? view
    : { ...view, changes: { ...view.changes, files: view.changes.files.slice(0, 20) } };
}
