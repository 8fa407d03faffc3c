import { mkdirSync } from "node:fs";
import { join } from "node:path";

/**
 * An environment whose every harness home lies under `root`: the user's own configs are never
 * read or written by a test.
 */
export function isolatedHarnessEnv(root: string): Record<string, string> {
  const user = join(root, "user");
  mkdirSync(user, { recursive: true });
  return {
    HOME: user,
    XDG_CONFIG_HOME: join(user, ".config"),
    XDG_DATA_HOME: join(user, ".local", "share"),
    XDG_CACHE_HOME: join(user, ".cache"),
    XDG_STATE_HOME: join(user, ".local", "state"),
    CODEX_HOME: join(user, ".codex"),
    CLAUDE_CONFIG_DIR: join(user, ".claude"),
    GEMINI_CLI_HOME: user,
    PI_CODING_AGENT_DIR: join(user, ".pi", "agent"),
    SWITCHYARD_HOME: join(root, "switchyard-home"),
  };
}

/** What `connect --json` prints. */
export interface ConnectJson {
  id: string;
  harness: string;
  scope: string;
  configFile: string;
  secretFile: string;
  credentialId: string;
  envVar: string | null;
  url: string;
  configChanged: boolean;
  tokenIssued: boolean;
  replacedCredentialId: string | null;
  serverRunning: boolean;
}
