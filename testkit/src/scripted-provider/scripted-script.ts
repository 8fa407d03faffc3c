import type { TurnUsageReport } from "@switchyard/spec";

/**
 * The scripted provider's prompt language. A message is plain text with `@@directive argument`
 * parts, run in order; the text outside directives is the "task" the default reply echoes.
 *
 * - `@@reply <text>`          answer with exactly this text
 * - `@@fail <message>`        end the turn failed with this provider error
 * - `@@wait <ms>`             pause
 * - `@@gate <name>`           pause until the gate is released (a file in the gate dir)
 * - `@@ask <question>`        open a blocking user-input request and use the answer
 * - `@@async-ask <question>`  open a non-blocking user-input request and keep working
 * - `@@approve <command>`     open a command approval request and report the decision
 * - `@@tool <name> <json>`    call a Switchyard MCP tool with the session's credential
 * - `@@history`               answer with the conversation so far (proves resume and fork)
 * - `@@effort`                answer with the reasoning effort the turn was given
 * - `@@subagent <title>`      report a provider-native sub-agent
 * - `@@subagent {json}`       report one with what a rich harness reports: `title`, `task`,
 *                             `agentType`, `model`, `status` (`completed`|`failed`, or
 *                             `running`: it is spawned and never reported ended), `usage`
 *                             (a usage report, on its final event), `messages` (its transcript,
 *                             `[{ "role": "user"|"assistant", "text": … }]`) and `toolCall`
 *                             (true: the parent's tool call that spawned it is reported too),
 *                             `approve` (a command the child asks approval for, naming itself)
 * - `@@plan <text>`           propose a plan
 * - `@@refuse-steers`         the turn refuses every steer (like a provider whose turn is
 *                             between steps), so the host's fallback path runs
 * - `@@say <text>`            stream this text as the start of the reply (a message delta),
 *                             without completing it; the reply completes the message after it
 * - `@@shell <command>`       run a shell command in the session's folder and report it as a
 *                             command tool call with its output and exit code
 * - `@@diff <path> <diff>`    report a file change of <path> whose output is this unified diff
 * - `@@limit <capacity|quota> <code> <message>`
 *                             report a capacity or quota limit (a warning with `limit`), then
 *                             keep "retrying" until the turn is interrupted, as a harness that
 *                             retries a used-up free tier forever does
 * - `@@usage in=<n> out=<n> cached=<n> cache-write=<n> reasoning=<n> cost=<usd> model=<id>`
 *                             the turn reports this usage when it ends, however it ends (any
 *                             subset of the keys; several `@@usage` add up, `model=` files the
 *                             figures under that model too). A turn without one reports none.
 */
export type ProviderScriptStep =
  | { readonly kind: "reply"; readonly text: string }
  | { readonly kind: "fail"; readonly message: string }
  | { readonly kind: "wait"; readonly ms: number }
  | { readonly kind: "gate"; readonly name: string }
  | { readonly kind: "ask"; readonly question: string; readonly blocking: boolean }
  | { readonly kind: "approve"; readonly command: string }
  | { readonly kind: "tool"; readonly name: string; readonly args: Record<string, unknown> }
  | { readonly kind: "history" }
  | { readonly kind: "effort" }
  | { readonly kind: "subagent"; readonly title: string; readonly native?: NativeSubagentScript }
  | { readonly kind: "plan"; readonly text: string }
  | { readonly kind: "refuse-steers" }
  | { readonly kind: "usage"; readonly usage: TurnUsageReport }
  | { readonly kind: "say"; readonly text: string }
  | { readonly kind: "shell"; readonly command: string }
  | { readonly kind: "diff"; readonly path: string; readonly diff: string }
  | {
      readonly kind: "limit";
      readonly limit: "capacity" | "quota";
      readonly code: string;
      readonly message: string;
    };

/** What `@@subagent {json}` reports of a provider-native sub-agent beyond its title. */
export interface NativeSubagentScript {
  readonly task?: string;
  readonly agentType?: string;
  readonly model?: string;
  /** How it ends; `running`: it never does (a harness that leaves its turn's end to the host). */
  readonly status?: "completed" | "failed" | "running";
  readonly usage?: TurnUsageReport;
  readonly messages?: readonly { readonly role: "user" | "assistant"; readonly text: string }[];
  readonly toolCall?: boolean;
  /** A command the child asks approval for through the parent's session (naming the child), before it ends. */
  readonly approve?: string;
}

/** A parsed message: steps in order and the free text around them. */
export interface ParsedProviderScript {
  readonly steps: readonly ProviderScriptStep[];
  readonly freeText: string;
}

const DIRECTIVE =
  /@@(reply|fail|wait|gate|ask|async-ask|approve|tool|history|effort|subagent|plan|refuse-steers|usage|say|shell|diff|limit)(?![\w-])/g;

/** Index just past the JSON object starting at `start` (which must be `{`), honouring strings. */
function endOfJsonObject(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i += 1) {
    const ch = text[i];
    if (inString) {
      if (ch === "\\") i += 1;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === "{") depth += 1;
    else if (ch === "}") {
      depth -= 1;
      if (depth === 0) return i + 1;
    }
  }
  return text.length;
}

function toolStep(text: string, start: number, nextDirective: number): { step: ProviderScriptStep; end: number } {
  const rest = text.slice(start);
  const nameMatch = /^\s*([A-Za-z0-9_.:-]+)/.exec(rest);
  const name = nameMatch?.[1] ?? "";
  let cursor = start + (nameMatch?.[0].length ?? 0);
  while (cursor < text.length && /\s/.test(text[cursor]!)) cursor += 1;
  if (text[cursor] !== "{")
    return { step: { kind: "tool", name, args: {} }, end: Math.max(cursor, Math.min(nextDirective, text.length)) };
  // The JSON may itself contain directives (a task for a child), so it ends at its closing brace.
  const end = endOfJsonObject(text, cursor);
  const json = text.slice(cursor, end);
  try {
    const parsed = JSON.parse(json) as unknown;
    return {
      step: {
        kind: "tool",
        name,
        args: typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : {},
      },
      end,
    };
  } catch {
    throw new Error(`@@tool ${name}: arguments are not valid JSON: ${json}`);
  }
}

const USAGE_KEYS: Readonly<Record<string, keyof Omit<TurnUsageReport, "byModel">>> = {
  in: "inputTokens",
  out: "outputTokens",
  cached: "cacheReadInputTokens",
  "cache-write": "cacheCreationInputTokens",
  reasoning: "reasoningOutputTokens",
  cost: "costUsd",
};

/** `in=120 out=30 cost=0.002 model=m`: the usage a `@@usage` step reports. */
export function parseUsageArgument(argument: string): TurnUsageReport {
  const figures: Record<string, number> = {};
  let model: string | null = null;
  for (const pair of argument.split(/\s+/).filter((part) => part !== "")) {
    const [key = "", value = ""] = pair.split("=", 2);
    if (key === "model") {
      model = value;
      continue;
    }
    const figure = USAGE_KEYS[key];
    const number = Number(value);
    if (figure === undefined || value === "" || !Number.isFinite(number) || number < 0) {
      throw new Error(
        `@@usage: "${pair}" is not one of ${[...Object.keys(USAGE_KEYS), "model"].map((k) => `${k}=…`).join(", ")} with a non-negative number`,
      );
    }
    figures[figure] = number;
  }
  return model === null ? figures : { ...figures, byModel: { [model]: figures } };
}

function nextDirective(text: string, from: number): RegExpExecArray | null {
  DIRECTIVE.lastIndex = from;
  return DIRECTIVE.exec(text);
}

/** Parses a message into steps. Directives run to the next directive or the end of the text. */
export function parseProviderScript(text: string): ParsedProviderScript {
  const steps: ProviderScriptStep[] = [];
  const free: string[] = [];
  let position = 0;
  let match = nextDirective(text, 0);
  if (match === null) return { steps: [], freeText: text.trim() };
  while (match !== null) {
    free.push(text.slice(position, match.index).trim());
    const start = match.index + match[0].length;
    const following = nextDirective(text, start);
    const defaultEnd = following === null ? text.length : following.index;
    const argument = text.slice(start, defaultEnd).trim();
    let end = defaultEnd;
    switch (match[1]) {
      case "reply":
        steps.push({ kind: "reply", text: argument });
        break;
      case "fail":
        steps.push({ kind: "fail", message: argument || "scripted failure" });
        break;
      case "wait":
        steps.push({ kind: "wait", ms: Number.parseInt(argument, 10) || 0 });
        break;
      case "gate":
        steps.push({ kind: "gate", name: argument.split(/\s+/)[0] || "gate" });
        break;
      case "ask":
      case "async-ask":
        steps.push({ kind: "ask", question: argument || "What should I do?", blocking: match[1] === "ask" });
        break;
      case "approve":
        steps.push({ kind: "approve", command: argument || "echo approved" });
        break;
      case "tool": {
        const parsed = toolStep(text, start, defaultEnd);
        steps.push(parsed.step);
        end = parsed.end;
        break;
      }
      case "history":
        steps.push({ kind: "history" });
        break;
      case "effort":
        steps.push({ kind: "effort" });
        break;
      case "subagent": {
        let cursor = start;
        while (cursor < text.length && /\s/.test(text[cursor]!)) cursor += 1;
        if (text[cursor] !== "{") {
          steps.push({ kind: "subagent", title: argument || "native helper" });
          break;
        }
        end = endOfJsonObject(text, cursor);
        const json = text.slice(cursor, end);
        let parsed: { title?: string } & NativeSubagentScript;
        try {
          parsed = JSON.parse(json) as { title?: string } & NativeSubagentScript;
        } catch {
          throw new Error(`@@subagent: the sub-agent is not valid JSON: ${json}`);
        }
        const { title, ...native } = parsed;
        steps.push({ kind: "subagent", title: title ?? "native helper", native });
        break;
      }
      case "plan":
        steps.push({ kind: "plan", text: argument || "1. Do the thing." });
        break;
      case "refuse-steers":
        steps.push({ kind: "refuse-steers" });
        break;
      case "usage":
        steps.push({ kind: "usage", usage: parseUsageArgument(argument) });
        break;
      case "say":
        steps.push({ kind: "say", text: argument });
        break;
      case "shell":
        steps.push({ kind: "shell", command: argument || "true" });
        break;
      case "limit": {
        const [limit = "", code = "limit_reached", ...message] = argument.split(/\s+/);
        if (limit !== "capacity" && limit !== "quota")
          throw new Error(`@@limit: "${limit}" is not capacity or quota (@@limit <capacity|quota> <code> <message>)`);
        steps.push({ kind: "limit", limit, code, message: message.join(" ") || `${limit} limit reached` });
        break;
      }
      case "diff": {
        const [path = "file", ...rest] = argument.split(/\s+/);
        steps.push({ kind: "diff", path, diff: argument.slice(path.length).trim() || rest.join(" ") });
        break;
      }
    }
    position = end;
    match = nextDirective(text, end);
  }
  free.push(text.slice(position).trim());
  return { steps, freeText: free.filter((part) => part !== "").join(" ") };
}
