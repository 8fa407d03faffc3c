import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import type { SourcedProfile } from "../../config/profiles/profile-source.js";
import { untrustedFields } from "../../config/profiles/profile-trust.js";
import { OrchestratorFailure } from "../../engine/orchestrator-failure.js";
import { decideProfileSupport, type ProfileSessionWants } from "../../policy/index.js";
import type { ProviderCapabilities } from "../../spec/index.js";
import type { ThreadHarness } from "../../store/records.js";

/**
 * What a profile asks of its child's harness sessions: its tool rules, its harness home (an
 * absolute path, `~/` expanded) and the names of its environment variables and MCP servers;
 * null when nothing. A harness home, environment or MCP server from a project's file is refused (docs/profiles.md, the trust
 * rule): a cloned repository must not choose the account or settings a harness runs with.
 */
export function profileHarness(sourced: SourcedProfile | null): ThreadHarness | null {
  if (sourced === null) return null;
  const { profile, source } = sourced;
  const untrusted = untrustedFields(profile, source.kind);
  if (untrusted.length > 0)
    throw new OrchestratorFailure(
      "capability_denied",
      `Profile "${profile.name}" comes from ${source.file} (${source.kind}), a project file, and sets ${untrusted.join(" and ")}: only a profile in the user's own config.json may (a project file comes with the repository). Delegate without the profile, or ask the user to move it to config.json.`,
      {
        reason: "untrusted_profile_field",
        profile: profile.name,
        source: source.kind,
        file: source.file,
        fields: untrusted,
      },
    );
  const rules = profile.tools;
  const toolRules =
    rules === undefined || (rules.allow.length + rules.deny.length + rules.ask.length === 0 && !rules.allowOnly)
      ? null
      : { allow: rules.allow, deny: rules.deny, ask: rules.ask, allowOnly: rules.allowOnly };
  const harnessHome = profile.harnessHome === undefined ? null : absoluteHome(profile.name, profile.harnessHome);
  const environmentNames = Object.keys(profile.environment ?? {});
  const mcpServerNames = Object.keys(profile.mcpServers ?? {});
  if (toolRules === null && harnessHome === null && environmentNames.length === 0 && mcpServerNames.length === 0)
    return null;
  return { toolRules, harnessHome, environmentNames, mcpServerNames };
}

function absoluteHome(profileName: string, home: string): string {
  const expanded = home === "~" ? homedir() : home.startsWith("~/") ? join(homedir(), home.slice(2)) : home;
  if (!isAbsolute(expanded))
    throw new OrchestratorFailure(
      "invalid_request",
      `Profile "${profileName}"'s harnessHome "${home}" is not an absolute path (or ~/...); fix it in config.json.`,
      { field: "harnessHome", profile: profileName },
    );
  return expanded;
}

/**
 * The shared policy's verdict on running a profile's harness settings on the selected provider:
 * the settings to record (allow rules the provider cannot apply dropped, said in `notes`), or
 * `capability_denied` naming the provider, the capability and the rule or field.
 */
export function checkProfileSupport(
  harness: ThreadHarness | null,
  profileName: string | null,
  provider: { readonly providerInstanceId: string; readonly capabilities: ProviderCapabilities },
): { harness: ThreadHarness | null; notes: readonly string[] } {
  if (harness === null) return { harness, notes: [] };
  const decision = decideProfileSupport(
    provider.capabilities,
    sessionWants(harness),
    `Provider instance "${provider.providerInstanceId}"`,
  );
  if (!decision.ok)
    throw new OrchestratorFailure(
      "capability_denied",
      `${decision.reason} Profile "${profileName}" cannot run there: pick a provider that declares ${decision.capability} (orchestrator_capabilities), or delegate without the profile.`,
      {
        reason: "profile_not_enforceable",
        profile: profileName,
        providerInstanceId: provider.providerInstanceId,
        capability: decision.capability,
        rule: decision.subject,
      },
    );
  return { harness: { ...harness, toolRules: decision.toolRules }, notes: decision.notes };
}

/** What a profile's harness settings ask of a provider, as the shared policy reads them. */
export function sessionWants(harness: ThreadHarness): ProfileSessionWants {
  return {
    toolRules: harness.toolRules,
    harnessHome: harness.harnessHome !== null,
    environment: harness.environmentNames.length > 0,
    mcpServers: (harness.mcpServerNames ?? []).length > 0,
  };
}
