import type { Profile } from "../config/profiles/profile-schema.js";
import { decideProfileSupport } from "../policy/index.js";
import {
  SwitchyardError,
  type ExtraMcpServer,
  type OpenSessionInput,
  type ProviderCapabilities,
} from "../spec/index.js";
import type { ThreadRecord } from "../store/records.js";

/** What a session of a thread gets from the thread's profile. */
export type SessionProfileInput = Pick<OpenSessionInput, "toolRules" | "harnessHome" | "environment" | "mcpServers">;

/**
 * The profile settings a thread's new provider session opens with: its tool rules and harness
 * home as the thread recorded them, and its environment's values read now from the user's
 * config profile (records hold only the names: they are shown and streamed, values may be
 * secrets), and its MCP servers' definitions likewise. Checked again against the provider it opens on (the thread may have moved to
 * another): a provider that cannot carry them refuses to open, never runs without them.
 */
export function sessionProfileInput(
  thread: ThreadRecord,
  capabilities: ProviderCapabilities,
  configProfiles: readonly Profile[],
): SessionProfileInput {
  const harness = thread.harness;
  if (harness == null) return {};
  const decision = decideProfileSupport(
    capabilities,
    {
      toolRules: harness.toolRules,
      harnessHome: harness.harnessHome !== null,
      environment: harness.environmentNames.length > 0,
      mcpServers: (harness.mcpServerNames ?? []).length > 0,
    },
    `Provider instance "${thread.providerInstanceId}"`,
  );
  if (!decision.ok)
    throw new SwitchyardError(
      "unsupported_capability",
      `${decision.reason} Thread ${thread.id} runs profile "${thread.profile?.name ?? "?"}", so no session opens there.`,
      { capability: decision.capability, providerInstanceId: thread.providerInstanceId, rule: decision.subject },
    );
  const profile =
    thread.profile?.source === "config"
      ? configProfiles.find((candidate) => candidate.name === thread.profile!.name)
      : undefined;
  const mcpServerNames = harness.mcpServerNames ?? [];
  const mcpServers: Record<string, ExtraMcpServer> = {};
  for (const name of mcpServerNames) {
    const server = profile?.mcpServers?.[name];
    if (server === undefined)
      throw new SwitchyardError(
        "config_invalid",
        `Thread ${thread.id} runs profile "${thread.profile?.name ?? "?"}" with MCP server "${name}", which config.json's profile no longer defines; restore it or start new work.`,
        { profile: thread.profile?.name ?? null, mcpServer: name },
      );
    mcpServers[name] = server;
  }
  const environment: Record<string, string> = {};
  if (harness.environmentNames.length > 0) {
    for (const name of harness.environmentNames) {
      const value = profile?.environment?.[name];
      if (value === undefined)
        throw new SwitchyardError(
          "config_invalid",
          `Thread ${thread.id} runs profile "${thread.profile?.name ?? "?"}" with environment variable ${name}, which config.json's profile no longer sets; restore it or start new work.`,
          { profile: thread.profile?.name ?? null, variable: name },
        );
      environment[name] = value;
    }
  }
  return {
    ...(decision.toolRules !== null ? { toolRules: decision.toolRules } : {}),
    ...(harness.harnessHome !== null ? { harnessHome: harness.harnessHome } : {}),
    ...(harness.environmentNames.length > 0 ? { environment } : {}),
    ...(mcpServerNames.length > 0 ? { mcpServers } : {}),
  };
}
