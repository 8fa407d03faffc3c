import type { Profile } from "./profile-schema.js";
import type { ProfileSourceKind } from "./profile-source.js";

/** The profile fields that change whose account or settings a harness runs with. */
export const TRUSTED_ONLY_FIELDS = ["harnessHome", "environment", "mcpServers"] as const;

/**
 * The fields of a profile its source may not set. A project's files (`.switchyard/agents`,
 * converted `.claude/agents` and OpenCode agents) come with a cloned repository: honouring a
 * harness home, environment or MCP server from them would let any repository point a harness at another
 * account's home, set `ANTHROPIC_BASE_URL`, `NODE_OPTIONS` and the like, or start a command of
 * its own as an MCP server. Only the user's own
 * config.json may set them.
 */
export function untrustedFields(profile: Profile, source: ProfileSourceKind): readonly string[] {
  if (source === "config") return [];
  return TRUSTED_ONLY_FIELDS.filter((field) => profile[field] !== undefined);
}
