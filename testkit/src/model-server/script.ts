import { parseUsageDirective, type ScriptedUsageInput } from "./model-usage.js";

/**
 * The script language: what the scripted model does on each model call of a turn.
 *
 * A script is a list of steps; step N is played on the N-th model call after the last real user
 * message (N = tool rounds so far), so one prompt can script "call a tool, then reply". The same
 * steps can come from directives in the user's text (`@@tool echo {"text":"hi"} @@then @@reply ok`)
 * or from a test (`server.script(/deploy/, [{ tool: "echo", args: {} }, { reply: "ok" }])`).
 */

/** Arguments for a tool call: a JSON object, or a raw string for a freeform (custom) tool. */
export type ToolArguments = Record<string, unknown> | string;

/** Modifiers that apply to one step: timing before its action is sent, and the usage it reports. */
export interface StepTiming {
  /** Wait this long (ms) after opening the response before sending the action. */
  waitMs?: number;
  /** Keep the response open until `server.release(hold)` (latched: a released gate stays open). */
  hold?: string;
  /** The token counts this answer reports (`@@usage in=… cached=… out=…`), over the server's default. */
  usage?: ScriptedUsageInput;
}

/** Reply with this text (`{{output}}`, `{{tool}}` and `{{user}}` are substituted). */
export interface ReplyAction {
  reply: string;
}
/**
 * Call the offered tool whose (qualified) name ends with `tool`; `!Name` calls `Name` even when
 * the request does not offer it (to see a harness refuse a tool it removed).
 */
export interface ToolAction {
  tool: string;
  args?: ToolArguments;
}
/** Call the harness's own shell tool with this command. */
export interface ShellAction {
  shell: string;
}
/** Reply with the user's text (directives removed). */
export interface EchoAction {
  echo: true;
}
/** Fail the request: HTTP `status` (default 500) with an API-shaped error, or an error event inside a 200 stream. */
export interface FailAction {
  fail: string;
  status?: number;
  inStream?: boolean;
}

/** What the model does in one step. */
export type ScriptAction = ReplyAction | ToolAction | ShellAction | EchoAction | FailAction;

/** One scripted model step: an action with optional timing; timing alone plays the default reply. */
export type ScriptStep = (ScriptAction & StepTiming) | StepTiming;

/** The directive keywords, as written after `@@`. */
export const DIRECTIVE_NAMES = ["tool", "shell", "reply", "echo", "wait", "hold", "usage", "fail", "then"] as const;

/** A script parsed from text. */
export interface ParsedScript {
  /** The steps, in order. */
  steps: ScriptStep[];
  /** The text that is not part of any directive (what `@@echo` replies with). */
  prose: string;
  /** Problems found while parsing (e.g. bad JSON); the step is replaced by a reply naming them. */
  errors: string[];
}

const DIRECTIVE_RE = new RegExp(`(^|\\s)@@(${DIRECTIVE_NAMES.join("|")})(?=\\s|$)`, "g");

/** True when `text` contains at least one directive. */
export function hasDirectives(text: string): boolean {
  DIRECTIVE_RE.lastIndex = 0;
  return DIRECTIVE_RE.test(text);
}

/**
 * Parses directives out of user text. Directives may appear anywhere (Pi treats a `-p` message
 * starting with `@` as a file include, so write `go @@shell ls`). Arguments of `@@shell`,
 * `@@reply`, `@@fail` and `@@usage` run to the next directive or the end of the line; `@@tool` takes a name
 * and an optional JSON value (objects may span lines). A new action starts a new step; `@@then`
 * ends a step explicitly (useful after `@@wait`/`@@hold` with no action). Returns undefined when
 * the text has no directive.
 */
export function parseScript(text: string): ParsedScript | undefined {
  if (!hasDirectives(text)) return undefined;
  const steps: ScriptStep[] = [];
  const errors: string[] = [];
  const prose: string[] = [];
  let current: Record<string, unknown> = {};
  let hasAction = false;
  const flush = (force: boolean): void => {
    if (hasAction || force || Object.keys(current).length > 0) steps.push(current as ScriptStep);
    current = {};
    hasAction = false;
  };
  const setAction = (action: Record<string, unknown>): void => {
    if (hasAction) flush(false);
    Object.assign(current, action);
    hasAction = true;
  };

  let pos = 0;
  for (;;) {
    DIRECTIVE_RE.lastIndex = pos;
    const match = DIRECTIVE_RE.exec(text);
    if (!match) {
      prose.push(text.slice(pos));
      break;
    }
    const start = match.index + (match[1]?.length ?? 0);
    prose.push(text.slice(pos, start));
    const name = match[2] as (typeof DIRECTIVE_NAMES)[number];
    pos = start + 2 + name.length;
    switch (name) {
      case "then":
        flush(true);
        break;
      case "echo":
        setAction({ echo: true });
        break;
      case "wait": {
        const m = /^[ \t]+(\d+)/.exec(text.slice(pos));
        if (m?.[1]) {
          current["waitMs"] = Number(m[1]);
          pos += m[0].length;
        } else errors.push("@@wait needs a number of milliseconds");
        break;
      }
      case "usage": {
        const [argument, end] = restOfLine(text, pos);
        pos = end;
        const parsed = parseUsageDirective(argument);
        if (parsed.error !== undefined) errors.push(parsed.error);
        else current["usage"] = parsed.usage;
        break;
      }
      case "hold": {
        const m = /^[ \t]+(\S+)/.exec(text.slice(pos));
        if (m?.[1]) {
          current["hold"] = m[1];
          pos += m[0].length;
        } else errors.push("@@hold needs a gate name");
        break;
      }
      case "shell":
      case "reply":
      case "fail": {
        const [argument, end] = restOfLine(text, pos);
        pos = end;
        if (name === "shell") {
          if (argument === "") errors.push("@@shell needs a command");
          else setAction({ shell: argument });
        } else if (name === "reply") setAction({ reply: argument });
        else setAction({ ...parseFail(argument) });
        break;
      }
      case "tool": {
        const m = /^[ \t]+(\S+)/.exec(text.slice(pos));
        if (!m?.[1]) {
          errors.push("@@tool needs a tool name (suffix)");
          break;
        }
        pos += m[0].length;
        const action: ToolAction = { tool: m[1] };
        const ws = /^\s*/.exec(text.slice(pos))?.[0].length ?? 0;
        const opener = text[pos + ws];
        if (opener === "{" || opener === "[" || opener === '"') {
          const end = scanJsonValue(text, pos + ws);
          const raw = text.slice(pos + ws, end);
          try {
            const value: unknown = JSON.parse(raw);
            if (typeof value === "string" || (value && typeof value === "object" && !Array.isArray(value))) {
              action.args = value as ToolArguments;
            } else errors.push(`@@tool ${m[1]}: arguments must be a JSON object or string, got ${raw}`);
          } catch (error) {
            errors.push(`@@tool ${m[1]}: bad JSON arguments ${raw} (${(error as Error).message})`);
          }
          pos = end;
        }
        setAction(action as unknown as Record<string, unknown>);
        break;
      }
    }
  }
  flush(false);
  return { steps, prose: prose.join("").replace(/\s+/g, " ").trim(), errors };
}

function parseFail(argument: string): FailAction {
  const inStream = /^stream\b/.exec(argument);
  let rest = inStream ? argument.slice(inStream[0].length).trim() : argument;
  const status = /^(\d{3})\b/.exec(rest);
  if (status?.[1]) rest = rest.slice(status[0].length).trim();
  const action: FailAction = { fail: rest === "" ? "scripted failure" : rest };
  if (status?.[1]) action.status = Number(status[1]);
  if (inStream) action.inStream = true;
  return action;
}

/** The argument from `pos` to the next directive or end of line, and where it stops. */
function restOfLine(text: string, pos: number): [string, number] {
  const newline = text.indexOf("\n", pos);
  let end = newline === -1 ? text.length : newline;
  DIRECTIVE_RE.lastIndex = pos;
  const next = DIRECTIVE_RE.exec(text);
  if (next && next.index < end) end = next.index;
  return [text.slice(pos, end).trim(), end];
}

/** End index (exclusive) of the JSON value starting at `start`, honouring strings and nesting. */
function scanJsonValue(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === "\\") i++;
      else if (ch === '"') {
        inString = false;
        if (depth === 0) return i + 1;
      }
    } else if (ch === '"') inString = true;
    else if (ch === "{" || ch === "[") depth++;
    else if (ch === "}" || ch === "]") {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return text.length;
}

/**
 * Normalizes what a test passes to `server.script` / `server.enqueue`: a directive string, one
 * step, or a list of steps.
 */
export function toSteps(input: string | ScriptStep | readonly ScriptStep[]): ScriptStep[] {
  if (typeof input === "string") {
    const parsed = parseScript(input);
    if (!parsed) return [{ reply: input }];
    if (parsed.errors.length > 0) throw new Error(`Bad script ${JSON.stringify(input)}: ${parsed.errors.join("; ")}`);
    return parsed.steps;
  }
  return Array.isArray(input) ? [...(input as readonly ScriptStep[])] : [input as ScriptStep];
}
