import type { ExtraMcpServer, ToolRules } from "@switchyard/sdk";

type Action = "allow" | "ask" | "deny";
type Json = Record<string, unknown>;

/**
 * OpenCode's permission names for tool names a profile may use: OpenCode's own lowercase tool
 * names, Claude Code's spellings of the same tools (a profile converted from `.claude/agents`
 * says `Bash`, `Write`), and the tools OpenCode checks under another permission (`write`,
 * `apply_patch` are `edit`).
 */
const PERMISSION_NAMES: Readonly<Record<string, string>> = {
  bash: "bash",
  edit: "edit",
  write: "edit",
  apply_patch: "edit",
  patch: "edit",
  multiedit: "edit",
  read: "read",
  glob: "glob",
  grep: "grep",
  list: "list",
  ls: "list",
  task: "task",
  webfetch: "webfetch",
  websearch: "websearch",
  todowrite: "todowrite",
  question: "question",
  skill: "skill",
  lsp: "lsp",
};

/**
 * OpenCode's own tools by the permission that governs them (opencode 1.18.33 offers bash, edit,
 * write, glob, grep, question, read, skill, task, todowrite and webfetch to a Chat Completions
 * model; list, websearch, lsp and codesearch where enabled). `allowOnly` turns these off.
 */
const OWN_PERMISSIONS = [
  "read",
  "edit",
  "glob",
  "grep",
  "list",
  "bash",
  "task",
  "todowrite",
  "question",
  "webfetch",
  "websearch",
  "lsp",
  "skill",
  "codesearch",
];

/** Checks OpenCode makes beside tools; a runtime mode that allows everything allows these too. */
const CHECK_PERMISSIONS = ["external_directory", "doom_loop"];

/** One rule as OpenCode evaluates it: a permission name (may hold `*`), an argument pattern, an action. */
interface PermissionRule {
  readonly permission: string;
  readonly pattern: string;
  readonly action: Action;
}

const STRICTNESS: Readonly<Record<Action, number>> = { allow: 0, ask: 1, deny: 2 };

/** `Bash(git push:*)` → `{ permission: "bash", pattern: "git push*" }` (Claude's `:*` prefix form is OpenCode's `*`). */
function parseRule(rule: string, action: Action): PermissionRule {
  const open = rule.indexOf("(");
  const hasPattern = open !== -1 && rule.endsWith(")");
  const name = (hasPattern ? rule.slice(0, open) : rule).trim();
  const permission = PERMISSION_NAMES[name.toLowerCase()] ?? name;
  const pattern = hasPattern ? rule.slice(open + 1, -1).replace(/:\*$/, "*") : "*";
  return { permission, pattern, action };
}

function globMatches(pattern: string, name: string): boolean {
  const body = pattern
    .split("*")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${body}$`).test(name);
}

function entriesOf(value: unknown): Record<string, Action> {
  if (typeof value === "string") return { "*": value as Action };
  return typeof value === "object" && value !== null ? { ...(value as Record<string, Action>) } : {};
}

/** `{ "*": "deny" }` is written `"deny"`: OpenCode reads both the same. */
function compact(entries: Record<string, Action>): Action | Record<string, Action> {
  const keys = Object.keys(entries);
  return keys.length === 1 && keys[0] === "*" ? entries["*"]! : entries;
}

const byStrictness = (a: PermissionRule, b: PermissionRule) => STRICTNESS[a.action] - STRICTNESS[b.action];

/**
 * A session's `permission` config: the runtime mode's, with the profile's tool rules laid over
 * it, written for how opencode 1.18.33 reads it (checked against its source and binary): the
 * object becomes a list of rules, OpenCode's known permission keys (`read`, `edit`, `bash`…)
 * first in its schema's order, then every other key (`*`, `switchyard_*`) in ours, patterns in
 * ours, and a call gets the **last** rule whose permission and pattern match. So:
 * - no `*` key stands for "everything" (it would come after, and beat, every tool's own rule):
 *   a mode that allows everything is written tool by tool;
 * - within one permission the mode's action comes first, then its allow, ask and deny rules,
 *   so the strictest rule that names a call decides, as the sdk's `toolRuleVerdict` says;
 * - a rule whose name holds `*` applies to each OpenCode tool it names as that tool's own
 *   rule, and is kept as a key of its own (for MCP servers' tools) only where no stricter rule
 *   names a tool it covers (else that key would override the stricter rule);
 * - `allowOnly` denies each of OpenCode's own tools that no allow or ask rule names; MCP
 *   servers' tools keep the runtime mode's answer.
 * A deny rule without a pattern makes OpenCode drop the tool from the model's tools; a call
 * anyway is refused.
 */
export function permissionWithRules(modePermission: string | Json, rules: ToolRules | null | undefined): string | Json {
  if (rules == null) return modePermission;
  const parsed: PermissionRule[] = [
    ...rules.allow.map((rule) => parseRule(rule, "allow")),
    ...rules.ask.map((rule) => parseRule(rule, "ask")),
    ...rules.deny.map((rule) => parseRule(rule, "deny")),
  ];
  if (parsed.length === 0 && !rules.allowOnly) return modePermission;
  const keys = new Map<string, Record<string, Action>>();
  if (typeof modePermission === "string") {
    for (const name of [...OWN_PERMISSIONS, ...CHECK_PERMISSIONS]) keys.set(name, { "*": modePermission as Action });
  } else {
    for (const [name, value] of Object.entries(modePermission)) keys.set(name, entriesOf(value));
  }
  if (rules.allowOnly) for (const name of OWN_PERMISSIONS) keys.set(name, { "*": "deny" });
  const plain = parsed.filter((rule) => !rule.permission.includes("*"));
  const wildcard = parsed.filter((rule) => rule.permission.includes("*"));
  // A wildcard rule is each OpenCode tool's own rule where it names one.
  const expanded = [
    ...plain,
    ...wildcard.flatMap((rule) =>
      OWN_PERMISSIONS.filter((name) => globMatches(rule.permission, name)).map((name) => ({
        ...rule,
        permission: name,
      })),
    ),
  ];
  for (const name of new Set(expanded.map((rule) => rule.permission))) {
    const entries = keys.get(name) ?? {};
    for (const rule of expanded.filter((r) => r.permission === name).sort(byStrictness)) {
      delete entries[rule.pattern];
      entries[rule.pattern] = rule.action;
    }
    keys.set(name, entries);
  }
  // Wildcard keys come after every known key: keep one only where it overrides nothing stricter.
  const kept = wildcard
    .filter(
      (rule) =>
        !plain.some(
          (other) =>
            STRICTNESS[other.action] > STRICTNESS[rule.action] && globMatches(rule.permission, other.permission),
        ),
    )
    .sort(byStrictness);
  for (const rule of kept) {
    const entries = keys.get(rule.permission) ?? {};
    keys.delete(rule.permission);
    delete entries[rule.pattern];
    entries[rule.pattern] = rule.action;
    keys.set(rule.permission, entries);
  }
  return Object.fromEntries([...keys].map(([name, entries]) => [name, compact(entries)]));
}

/**
 * A profile's extra MCP servers as OpenCode's `mcp` entries: `remote` with its headers, or
 * `local` with the command and its arguments in one list. They travel in the config content
 * (the server's environment), never in argv.
 */
export function openCodeMcpEntries(servers: Readonly<Record<string, ExtraMcpServer>> | undefined): Json {
  const entries: Json = {};
  for (const [name, server] of Object.entries(servers ?? {})) {
    entries[name] =
      server.type === "http"
        ? { type: "remote", url: server.url, enabled: true, oauth: false, headers: { ...(server.headers ?? {}) } }
        : {
            type: "local",
            command: [server.command, ...(server.args ?? [])],
            enabled: true,
            environment: { ...(server.env ?? {}) },
          };
  }
  return entries;
}
