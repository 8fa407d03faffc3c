import type { OpenSessionInput, ToolRules } from "@switchyard/spec";

/**
 * One session's harness environment: the adapter's environment for its instance (built with
 * `harnessEnvironment`), then the profile's `environment`, then the profile's `harnessHome` in
 * `homeVariable` (CODEX_HOME, CLAUDE_CONFIG_DIR...). The host gives these only to a provider
 * that declares `sessions.environment` / `sessions.harnessHome`. Values may be secrets: pass
 * the result as the process environment, never into argv or a log line.
 * @public
 */
export function sessionEnvironment(
  base: Readonly<Record<string, string>>,
  input: Pick<OpenSessionInput, "environment" | "harnessHome">,
  homeVariable: string,
): Record<string, string> {
  const env: Record<string, string> = { ...base, ...(input.environment ?? {}) };
  if (input.harnessHome != null) env[homeVariable] = input.harnessHome;
  return env;
}

/** What a session's tool rules say of one call: `deny`, `ask`, `allow`, or `default` (no rule names it). @public */
export type ToolRuleVerdict = "deny" | "ask" | "allow" | "default";

/**
 * Whether a rule names a tool call. A rule is a tool name (`Bash`, `edit`; `*` matches any run
 * of characters, names compare case-insensitively), optionally with an argument pattern in
 * parentheses matched against the call's main argument (a command line, a path): `*` matches
 * any run of characters and a trailing `:*` (Claude Code's prefix form) any rest.
 * @public
 */
export function toolRuleMatches(rule: string, toolName: string, argument?: string | null): boolean {
  const open = rule.indexOf("(");
  const namePattern = open === -1 ? rule : rule.slice(0, open);
  if (!glob(namePattern.trim(), "i").test(toolName)) return false;
  if (open === -1 || !rule.endsWith(")")) return open === -1;
  const argumentPattern = rule.slice(open + 1, -1).replace(/:\*$/, "*");
  return argument != null && glob(argumentPattern, "").test(argument);
}

/**
 * The verdict of a session's rules on one call, strictest first: a deny rule wins over an ask
 * rule, an ask rule over an allow rule; with `allowOnly`, a call no allow or ask rule names is
 * denied unless `exempt` (the host's own MCP tools, which orchestration needs).
 * @public
 */
export function toolRuleVerdict(
  rules: ToolRules | null | undefined,
  toolName: string,
  argument?: string | null,
  options: { readonly exempt?: boolean } = {},
): ToolRuleVerdict {
  if (rules == null) return "default";
  const named = (list: readonly string[]) => list.some((rule) => toolRuleMatches(rule, toolName, argument));
  if (named(rules.deny)) return "deny";
  if (named(rules.ask)) return "ask";
  if (named(rules.allow)) return "allow";
  return rules.allowOnly && options.exempt !== true ? "deny" : "default";
}

function glob(pattern: string, flags: string): RegExp {
  const body = pattern
    .split("*")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${body}$`, flags);
}
