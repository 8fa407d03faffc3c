import { style } from "./output.js";
import type { ServerEvent } from "./server-events.js";

const TERMINAL_ITEM_STATUSES: ReadonlySet<string> = new Set(["completed", "failed", "declined", "cancelled"]);
/** Items shown as one quiet line once they are done. */
const QUIET_KINDS: ReadonlySet<string> = new Set(["reasoning", "subagent", "handoff", "notice", "proposed_plan"]);

function oneLine(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/**
 * Prints a run's progress, as it happens, for a person at a terminal (to stderr, so stdout
 * carries only the answer): the assistant's messages, tool calls and other items once they are
 * done, questions and approvals with the commands that answer them. The latest assistant
 * message is held back until something follows it: if nothing does, it is the run's answer,
 * which the command prints to stdout, so it is never shown twice.
 */
export class RunProgress {
  private readonly printed = new Set<string>();
  private heldMessage: string | null = null;
  private skippedPrompt = false;

  constructor(
    private readonly threadId: string,
    private readonly prompt: string,
    /** Only questions and approvals (with --json, whose stdout is the result): what a person must act on. */
    private readonly requestsOnly = false,
    private readonly out: NodeJS.WriteStream = process.stderr,
  ) {}

  /** Shows what an event of the thread says; other threads' events are ignored. */
  show(event: ServerEvent): void {
    if (this.requestsOnly) {
      if (event.type === "request.opened" && event.threadId === this.threadId) this.request(event.data.request);
      return;
    }
    if (event.type === "task.updated") return this.task(event);
    if (event.threadId !== this.threadId) return;
    switch (event.type) {
      case "message":
        return this.message(event.data.item);
      case "item":
        return this.item(event.data.item);
      case "request.opened":
        return this.request(event.data.request);
      default:
        return;
    }
  }

  private write(line: string): void {
    this.out.write(`${line}\n`);
  }

  /** Shows the held assistant message: something came after it, so it was not the answer. */
  private release(): void {
    if (this.heldMessage === null) return;
    this.write(this.heldMessage);
    this.heldMessage = null;
  }

  private message(item: { itemId: string; role: string | null; text: string }): void {
    if (item.role === "assistant") {
      this.release();
      this.heldMessage = item.text;
      return;
    }
    // The prompt this command sent is not repeated; other messages (a steer, a result) are.
    if (!this.skippedPrompt && item.text === this.prompt) {
      this.skippedPrompt = true;
      return;
    }
    this.release();
    this.write(style(`› ${oneLine(item.text)}`, "dim", this.out));
  }

  private item(item: {
    itemId: string;
    kind: string;
    status: string;
    text: string;
    details: Record<string, unknown>;
  }): void {
    if (!TERMINAL_ITEM_STATUSES.has(item.status) || this.printed.has(item.itemId)) return;
    if (item.kind === "tool_call") {
      this.printed.add(item.itemId);
      this.release();
      const name = typeof item.details.name === "string" && item.text === "" ? item.details.name : item.text;
      const outcome =
        item.status === "completed" ? style(item.status, "green", this.out) : style(item.status, "red", this.out);
      this.write(`  ⚙ ${oneLine(name, 120)} → ${outcome}`);
    } else if (QUIET_KINDS.has(item.kind) && item.text.trim() !== "") {
      this.printed.add(item.itemId);
      this.release();
      this.write(style(`  ${item.kind.replace("_", " ")}: ${oneLine(item.text)}`, "dim", this.out));
    }
  }

  private request(request: {
    requestId: string;
    kind: string;
    request: { title?: string; approvalKind?: string; questions?: { question: string }[] };
  }): void {
    this.release();
    if (request.kind === "approval") {
      this.write(
        style(
          `needs approval: ${request.request.title ?? "(untitled)"} (${request.request.approvalKind ?? "approval"}, request ${request.requestId})`,
          "yellow",
          this.out,
        ),
      );
      this.write(
        `  answer with: switchyard threads approve ${this.threadId}  (or decline; or in the web UI: switchyard ui)`,
      );
    } else {
      const questions = (request.request.questions ?? []).map((q) => q.question).join(" / ");
      this.write(style(`asks: ${questions} (request ${request.requestId})`, "yellow", this.out));
      this.write(
        `  answer it in the web UI (switchyard ui), or dismiss it: switchyard threads decline ${this.threadId}`,
      );
    }
  }

  private task(event: ServerEvent): void {
    const task = event.data.task as {
      taskId: string;
      parentThreadId: string;
      title: string;
      providerInstanceId: string;
      status: string;
      finalized: boolean;
    };
    if (task.parentThreadId !== this.threadId || !task.finalized || this.printed.has(`task:${task.taskId}`)) return;
    this.printed.add(`task:${task.taskId}`);
    this.release();
    this.write(style(`  ↳ delegated "${task.title}" to ${task.providerInstanceId}: ${task.status}`, "dim", this.out));
  }
}
