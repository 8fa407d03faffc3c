import type { CapabilityName, ProviderCapabilities, ToolRules } from "../spec/index.js";

/** What a profile asks of the provider session its work runs in. */
export interface ProfileSessionWants {
  readonly toolRules: ToolRules | null;
  readonly harnessHome: boolean;
  readonly environment: boolean;
  /** The profile adds MCP servers to the harness. */
  readonly mcpServers: boolean;
}

/** The provider can carry the profile (with notes on what it leaves out), or the first gap. */
export type ProfileSupportDecision =
  | { readonly ok: true; readonly notes: readonly string[]; readonly toolRules: ToolRules | null }
  | {
      readonly ok: false;
      readonly capability: CapabilityName;
      /** The rule or field that cannot be carried (`deny: Bash`, `harnessHome`). */
      readonly subject: string;
      readonly reason: string;
    };

/**
 * Whether a provider can run a profile's session as the profile says. Deny, ask and allow-only
 * rules restrict the agent: a provider that cannot enforce one would run the work with more
 * power than the profile grants, so the delegation is refused. Allow rules alone only spare
 * approval prompts: a provider that cannot apply them runs without them (the prompts stay) and
 * the decision says so. A harness home or environment the provider cannot apply is refused: the
 * work would run as another account or without its settings.
 */
export function decideProfileSupport(
  capabilities: ProviderCapabilities,
  wants: ProfileSessionWants,
  providerName: string,
): ProfileSupportDecision {
  const notes: string[] = [];
  let toolRules = wants.toolRules;
  if (toolRules !== null) {
    const supported = capabilities.tools.rules;
    const restricting = [
      ["deny", toolRules.deny],
      ["ask", toolRules.ask],
    ] as const;
    for (const [kind, rules] of restricting)
      if (rules.length > 0 && !supported[kind])
        return {
          ok: false,
          capability: `tools.rules.${kind}`,
          subject: `${kind}: ${rules[0]}`,
          reason: `${providerName} cannot enforce ${kind} rules on its tools (it does not declare tools.rules.${kind}), so the profile's "${rules[0]}" would not hold there.`,
        };
    if (toolRules.allowOnly && !supported.allowOnly)
      return {
        ok: false,
        capability: "tools.rules.allowOnly",
        subject: "allowOnly",
        reason: `${providerName} cannot limit its tools to the profile's allowed ones (it does not declare tools.rules.allowOnly).`,
      };
    if (toolRules.allow.length > 0 && !supported.allow) {
      notes.push(
        `${providerName} cannot pre-approve tools, so the profile's allow rules (${toolRules.allow.join(", ")}) are not applied: those tools ask as the runtime mode says.`,
      );
      toolRules = { ...toolRules, allow: [] };
    }
    if (toolRules.allow.length + toolRules.deny.length + toolRules.ask.length === 0 && !toolRules.allowOnly)
      toolRules = null;
  }
  if (wants.harnessHome && !capabilities.sessions.harnessHome)
    return {
      ok: false,
      capability: "sessions.harnessHome",
      subject: "harnessHome",
      reason: `${providerName} cannot run its harness with another home (it does not declare sessions.harnessHome).`,
    };
  if (wants.environment && !capabilities.sessions.environment)
    return {
      ok: false,
      capability: "sessions.environment",
      subject: "environment",
      reason: `${providerName} cannot give its harness extra environment (it does not declare sessions.environment).`,
    };
  if (wants.mcpServers && !capabilities.tools.extraMcpServers)
    return {
      ok: false,
      capability: "tools.extraMcpServers",
      subject: "mcpServers",
      reason: `${providerName} cannot give its harness extra MCP servers (it does not declare tools.extraMcpServers).`,
    };
  return { ok: true, notes, toolRules };
}
