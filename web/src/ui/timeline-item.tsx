import { useState } from "preact/hooks";
import { api, query } from "../api/client.js";
import { ApiError, type ThreadItemPart, type TimelineItem } from "../api/types.js";
import {
  argumentsText,
  commandLine,
  diffLines,
  durationText,
  failureReason,
  firstLines,
  looksLikeDiff,
  OUTPUT_PREVIEW_LINES,
} from "../model/item-display.js";
import { Markdown } from "./markdown.js";
import { RelativeTime } from "./relative-time.js";

/** Reads one part of an item whole, page after page (GET /threads/{threadId}/items/{itemId}). */
async function readWhole(threadId: string, itemId: string, part: "text" | "output" | "input"): Promise<string> {
  let text = "";
  for (let offset: number | null = 0, pages = 0; offset !== null && pages < 100; pages += 1) {
    const page: ThreadItemPart = await api(
      "GET",
      `/threads/${encodeURIComponent(threadId)}/items/${encodeURIComponent(itemId)}${query({ part, offset })}`,
    );
    text += page.text;
    offset = page.nextOffset ?? null;
  }
  return text;
}

/** A part the thread read cut short, and a button that reads it whole. */
function useWhole(threadId: string, itemId: string, part: "text" | "output" | "input") {
  const [whole, setWhole] = useState<string | null>(null);
  const [state, setState] = useState<{ readonly busy: boolean; readonly error: string | null }>({
    busy: false,
    error: null,
  });
  const load = async () => {
    setState({ busy: true, error: null });
    try {
      setWhole(await readWhole(threadId, itemId, part));
      setState({ busy: false, error: null });
    } catch (failure) {
      setState({ busy: false, error: failure instanceof ApiError ? failure.message : String(failure) });
    }
  };
  return { whole, busy: state.busy, error: state.error, load };
}

/** One timeline entry, as a person reads it: messages as markdown, tool calls as cards, reasoning folded. */
export function TimelineEntry(props: {
  readonly threadId: string;
  readonly item: TimelineItem;
  readonly nowMs: number;
}) {
  const { item } = props;
  if (item.kind === "user_message" || item.kind === "assistant_message" || item.kind === "proposed_plan")
    return <MessageEntry {...props} />;
  if (item.kind === "tool_call") return <ToolCallCard {...props} />;
  if (item.kind === "reasoning") return <ReasoningEntry {...props} />;
  const who = item.kind.replace(/_/g, " ");
  const reason = failureReason(item);
  return (
    <li class={`item item-activity kind-${item.kind}`} data-position={item.position} data-item-id={item.itemId}>
      <div class="item-head">
        <span class="item-who">{who}</span>
        <span class={`item-status status-${item.status}`}>{item.status.replace(/_/g, " ")}</span>
        <RelativeTime iso={item.createdAt} nowMs={props.nowMs} />
      </div>
      <div class="item-text">{item.text}</div>
      {reason !== null && (
        <p class="failure-reason" data-failure-reason>
          Failed: {reason}
        </p>
      )}
    </li>
  );
}

function MessageEntry(props: { readonly threadId: string; readonly item: TimelineItem; readonly nowMs: number }) {
  const { item } = props;
  const whole = useWhole(props.threadId, item.itemId, "text");
  const who = item.role ?? (item.kind === "proposed_plan" ? "plan" : item.kind.replace(/_/g, " "));
  const text = whole.whole ?? item.text;
  return (
    <li
      class={`item item-${item.role ?? "activity"} kind-${item.kind}`}
      data-position={item.position}
      data-item-id={item.itemId}
    >
      <div class="item-head">
        <span class="item-who">{who}</span>
        {item.details.partial === true && <span class="hint">cut off when its turn ended</span>}
        <RelativeTime iso={item.createdAt} nowMs={props.nowMs} />
      </div>
      {/* What a person typed stays as typed; what an agent wrote is read as markdown. */}
      {item.role === "user" ? <div class="item-text plain">{text}</div> : <Markdown class="item-text" text={text} />}
      {item.truncated && whole.whole === null && (
        <p class="cut">
          <span class="hint">Cut short here.</span>{" "}
          <button type="button" class="link-button" disabled={whole.busy} onClick={() => void whole.load()}>
            {whole.busy ? "Reading…" : "Show the whole message"}
          </button>
          {whole.error !== null && <span class="error"> {whole.error}</span>}
        </p>
      )}
    </li>
  );
}

function ReasoningEntry(props: { readonly item: TimelineItem; readonly nowMs: number }) {
  const { item } = props;
  return (
    <li class="item item-activity kind-reasoning" data-position={item.position} data-item-id={item.itemId}>
      <details class="reasoning">
        <summary>
          <span class="item-who">reasoning</span>{" "}
          <span class="hint">{firstLines(item.text, 1).shown.slice(0, 80)}</span>
        </summary>
        <div class="item-text plain">{item.text}</div>
      </details>
    </li>
  );
}

/** A tool call: what ran (a command line, or its arguments), how it ended, how long it took, and its output. */
function ToolCallCard(props: { readonly threadId: string; readonly item: TimelineItem; readonly nowMs: number }) {
  const { item } = props;
  const details = item.details;
  const toolKind = typeof details.toolKind === "string" ? details.toolKind : "other";
  const name = typeof details.name === "string" ? details.name : toolKind;
  const command = toolKind === "command" ? commandLine(item) : null;
  const args = command === null ? argumentsText(item) : null;
  const exitCode = typeof details.exitCode === "number" ? details.exitCode : null;
  const duration = typeof details.durationMs === "number" ? details.durationMs : null;
  const output = typeof details.output === "string" ? details.output : null;
  const outputCut = details.outputTruncated === true;
  const running = item.status === "in_progress";
  return (
    <li
      class={`item tool-card tool-${toolKind} status-${item.status}`}
      data-position={item.position}
      data-item-id={item.itemId}
      data-tool-kind={toolKind}
    >
      <div class="item-head">
        <span class="tool-name" title={typeof details.server === "string" ? `MCP server ${details.server}` : undefined}>
          {name}
        </span>
        <span class={`tool-status status-${item.status}`} data-tool-status>
          {running ? "running" : item.status}
        </span>
        {exitCode !== null && (
          <span class={`exit-code${exitCode === 0 ? "" : " failed"}`} data-exit-code={exitCode}>
            exit {exitCode}
          </span>
        )}
        {duration !== null && (
          <span class="duration" data-duration>
            {durationText(duration)}
          </span>
        )}
        <RelativeTime iso={item.createdAt} nowMs={props.nowMs} />
      </div>
      {command !== null ? (
        <pre class="command-line" aria-label="Command">
          <code>
            <span aria-hidden="true">$ </span>
            {command}
          </code>
        </pre>
      ) : toolKind === "file_change" ? (
        <p class="tool-title">{item.text}</p>
      ) : (
        <>
          <p class="tool-title">{item.text}</p>
          {args !== null && <ToolArguments threadId={props.threadId} item={item} text={args} />}
        </>
      )}
      {output !== null && output !== "" && (
        <ToolOutput
          threadId={props.threadId}
          item={item}
          preview={output}
          cut={outputCut}
          diff={toolKind === "file_change" || looksLikeDiff(output)}
        />
      )}
    </li>
  );
}

function ToolArguments(props: { readonly threadId: string; readonly item: TimelineItem; readonly text: string }) {
  const whole = useWhole(props.threadId, props.item.itemId, "input");
  const previewOnly = props.item.details.input === undefined;
  return (
    <details class="tool-args">
      <summary>Arguments</summary>
      <pre tabIndex={0}>
        <code>{whole.whole ?? props.text}</code>
      </pre>
      {previewOnly && whole.whole === null && (
        <button type="button" class="link-button" disabled={whole.busy} onClick={() => void whole.load()}>
          {whole.busy ? "Reading…" : "Show all arguments"}
        </button>
      )}
    </details>
  );
}

/** A tool's output: its first lines, all of what the read carried on request, the whole stored output through the item read. */
function ToolOutput(props: {
  readonly threadId: string;
  readonly item: TimelineItem;
  readonly preview: string;
  readonly cut: boolean;
  readonly diff: boolean;
}) {
  const [expanded, setExpanded] = useState(false);
  const whole = useWhole(props.threadId, props.item.itemId, "output");
  const text = whole.whole ?? (props.cut ? props.preview.replace(/…$/, "") : props.preview);
  const { shown, hidden } =
    expanded || whole.whole !== null ? { shown: text, hidden: 0 } : firstLines(text, OUTPUT_PREVIEW_LINES);
  const total = typeof props.item.details.outputChars === "number" ? props.item.details.outputChars : text.length;
  return (
    <div class="tool-output">
      {props.diff ? (
        <pre class="diff" tabIndex={0} aria-label="Changes">
          {diffLines(shown).map((line, index) => (
            <span key={index} class={`diff-${line.kind}`}>
              {line.text}
              {"\n"}
            </span>
          ))}
        </pre>
      ) : (
        <pre tabIndex={0} aria-label="Output">
          <code>{shown}</code>
        </pre>
      )}
      <div class="output-actions">
        {hidden > 0 && (
          <button type="button" class="link-button" onClick={() => setExpanded(true)}>
            Show {hidden} more lines
          </button>
        )}
        {props.cut && whole.whole === null && (
          <button
            type="button"
            class="link-button"
            data-read-whole
            disabled={whole.busy}
            onClick={() => void whole.load()}
          >
            {whole.busy ? "Reading…" : `Show the whole output (${total.toLocaleString("en")} characters)`}
          </button>
        )}
        {whole.error !== null && <span class="error">{whole.error}</span>}
      </div>
    </div>
  );
}
