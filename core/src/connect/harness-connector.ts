import { homedir } from "node:os";

/** The harnesses `switchyard connect` can wire to Switchyard. */
export const HARNESS_IDS = ["claude", "codex", "cursor", "opencode", "gemini", "pi"] as const;

/** One of {@link HARNESS_IDS}. */
export type HarnessId = (typeof HARNESS_IDS)[number];

/** Where an entry goes: the project's own config (shared with whoever clones it) or the user's. */
export type ConnectScope = "project" | "user";

/** Where a connection is written: the scope, the project folder, and the environment that locates the harness's user config. */
export interface ConnectionTarget {
  readonly scope: ConnectScope;
  /** Absolute project folder (the current folder unless `--project`). */
  readonly projectDir: string;
  /** The environment the harness runs in (HOME, CODEX_HOME, CLAUDE_CONFIG_DIR, XDG_CONFIG_HOME…). */
  readonly env: NodeJS.ProcessEnv;
}

/** What an entry says: where Switchyard is and where the harness finds the token. */
export interface EntrySpec {
  /** The MCP server key (`switchyard`). */
  readonly serverName: string;
  readonly url: string;
  /** Above the server's longest blocking wait, so the harness never gives up first. */
  readonly toolTimeoutMs: number;
  /** The file only the user can read that holds the secret in the form {@link HarnessConnector.secretContent} gives. */
  readonly secretFile: string;
  /** The environment variable the harness reads the token from, for harnesses that take it that way. */
  readonly envVar: string;
  /** Switchyard's own files the entry points at (the Pi extension). */
  readonly supportDir: string;
}

/** How the token reaches a harness without being written into its config. */
export type TokenDelivery =
  /** The config names an environment variable; `connections/env.sh` sets it from the secret file. */
  | "env"
  /** The config names a command that prints the header (Claude Code's `headersHelper`). */
  | "helper"
  /** The config names the secret file, which the harness reads itself (OpenCode's `{file:…}`, Pi's state file). */
  | "file";

/** A command that asks the harness itself what it makes of the entry. */
export interface HarnessSelfCheck {
  /** The executable's name, looked up on PATH. */
  readonly command: string;
  readonly args: readonly string[];
  /** What the output says about the entry: connected, listed only, or missing/failed, with the line that says so. */
  interpret(
    output: { stdout: string; stderr: string; exitCode: number | null },
    serverName: string,
  ): { ok: boolean; detail: string };
}

/**
 * A rule in a second file of the harness that lets it call Switchyard's tools without asking, so
 * it works headless (Claude Code keeps permissions in its settings, apart from its MCP servers).
 */
export interface ToolApprovalRule {
  /** The file the rule goes into. */
  file(target: ConnectionTarget): string;
  /** The text with the rule added (the rest as it was); throws on a malformed file. */
  apply(current: string | null, spec: Pick<EntrySpec, "serverName">): string;
  /** The text without the rule; the same text when it has none. */
  remove(current: string, spec: Pick<EntrySpec, "serverName">): string;
  /** Whether the text has the rule. */
  present(current: string, spec: Pick<EntrySpec, "serverName">): boolean;
}

/** Writes, reads and removes one harness's Switchyard entry in that harness's own format and place. */
export interface HarnessConnector {
  readonly id: HarnessId;
  readonly displayName: string;
  readonly tokenDelivery: TokenDelivery;
  /** The config file the entry goes into. */
  configFile(target: ConnectionTarget): string;
  /** The text of the secret file for a token (the token, a headers object, a state file). */
  secretContent(token: string): string;
  /** The token back out of the secret file's text (for `--check`); null when it holds none. */
  tokenFromSecret(text: string): string | null;
  /** The secret file's name ending (`.token`, `.headers.json`, `.state.json`). */
  readonly secretSuffix: string;
  /** The new text of the config file with the entry set (the rest as it was); throws on a malformed file. */
  apply(current: string | null, spec: EntrySpec): string;
  /** The text without the entry; the same text when it has none. */
  remove(current: string, spec: Pick<EntrySpec, "serverName">): string;
  /** The entry (or entries) as the file has them; undefined when absent. Throws on a malformed file. */
  read(current: string, spec: Pick<EntrySpec, "serverName">): unknown;
  /** What {@link read} returns right after {@link apply}. */
  expected(spec: EntrySpec): unknown;
  /** Files in Switchyard's home the entry needs (written before the entry). */
  supportFiles?(spec: EntrySpec): Promise<readonly { readonly file: string; readonly text: string }[]>;
  /** The harness's own look at the entry, where it has a command for it. */
  selfCheck?(target: ConnectionTarget): HarnessSelfCheck;
  /** Variables the harness needs to find this config file when run by `--check` (its home). */
  checkEnvironment?(target: ConnectionTarget): Record<string, string>;
  /** Where the entry alone does not let the tools run headless: the rule that does. */
  readonly toolApproval?: ToolApprovalRule;
}

/** The user's home folder as the harness sees it: $HOME, else the OS's. */
export function userHome(env: NodeJS.ProcessEnv): string {
  return env.HOME !== undefined && env.HOME !== "" ? env.HOME : homedir();
}
