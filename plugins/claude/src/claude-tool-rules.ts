import type { ToolRules } from "@switchyard/sdk";

/** A profile's tool rules as Claude Code's own options. */
export interface ClaudeToolRuleOptions {
  /** Removed from the model's context and refused: the profile's deny rules (`Bash`, `Bash(rm:*)`). */
  readonly disallowedTools: string[];
  /** Run without a permission prompt: the profile's allow rules. */
  readonly allowedTools: string[];
  /** With `allowOnly`, the only built-in tools Claude offers (MCP tools are not built-in and stay); else null. */
  readonly tools: string[] | null;
}

/**
 * Maps a profile's rules onto Claude Code's (`disallowedTools`, `allowedTools`, `tools`), which
 * take the same names and `Tool(pattern)` forms a profile is written in. Ask rules are not
 * mapped (the capability declares none): in full access the adapter itself allows every prompt.
 */
export function claudeToolRuleOptions(rules: ToolRules | null | undefined): ClaudeToolRuleOptions {
  if (rules == null) return { disallowedTools: [], allowedTools: [], tools: null };
  // `tools` takes tool names: `Bash(git status:*)` allowed means Bash is offered, the pattern pre-approved.
  const offered = [...new Set([...rules.allow, ...rules.ask].map((rule) => rule.replace(/\(.*\)$/, "").trim()))];
  return {
    disallowedTools: [...rules.deny],
    allowedTools: [...rules.allow],
    tools: rules.allowOnly ? offered : null,
  };
}
