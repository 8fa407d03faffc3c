import { createHash } from "node:crypto";
import type { Profile } from "./profile-schema.js";

/** Where a profile was read from. */
export type ProfileSourceKind = "config" | "switchyard" | "claude" | "opencode";

/** A profile's source: its kind, its file, and the version (content hash) it was read at. */
export interface ProfileSource {
  readonly kind: ProfileSourceKind;
  readonly file: string;
  /**
   * `sha256:` and the first 16 hex digits of the content hash: of the file for a file of its
   * own, of the entry's JSON for an entry of a shared file (config.json, opencode.json).
   */
  readonly version: string;
}

/** A profile and where it came from. */
export interface SourcedProfile {
  readonly profile: Profile;
  readonly source: ProfileSource;
}

/**
 * Something a source could not carry over: a name defined twice (`conflict`), a field with no
 * profile equivalent (`unconvertible`), a file or entry that is not a profile (`invalid`), or
 * an agent left out on purpose (`skipped`, e.g. disabled in OpenCode), or a field its source
 * may not set (`untrusted`: a project file's `harnessHome`, `environment` or `mcpServers`).
 */
export interface ProfileFinding {
  readonly kind: "conflict" | "unconvertible" | "invalid" | "skipped" | "untrusted";
  /** The profile's name, when known. */
  readonly profile: string | null;
  readonly file: string;
  /** The field concerned (`model`, `permissionMode`), when one is. */
  readonly field: string | null;
  readonly message: string;
}

/** Every profile a place offers (first of each name wins), with what could not be carried over. */
export interface ProfileCatalog {
  readonly profiles: readonly SourcedProfile[];
  readonly findings: readonly ProfileFinding[];
}

/** Findings that make `switchyard profiles list --check` fail (a skipped agent is only noted). */
export function isProblem(finding: ProfileFinding): boolean {
  return finding.kind !== "skipped";
}

/** The version string of some content. */
export function contentVersion(content: string): string {
  return `sha256:${createHash("sha256").update(content).digest("hex").slice(0, 16)}`;
}

/** What one source yields before names are merged across sources. */
export interface SourceReading {
  readonly profiles: SourcedProfile[];
  readonly findings: ProfileFinding[];
}
