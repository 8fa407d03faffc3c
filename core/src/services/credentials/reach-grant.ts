import type { RuntimeMode } from "../../spec/index.js";

// A grant is the credential a linked environment calls in with; the callers and the session
// registry name it, and the reach services issue and check it.

/**
 * What a linked environment may do here. `read` covers list, read, wait and status; `create`
 * new top-level threads (create_threads, t3_thread_launch); `send` messages to threads;
 * `delegate` delegated tasks; `cancel` interrupt and task_cancel. None implies another.
 */
export const GRANT_VERBS = ["read", "create", "send", "delegate", "cancel"] as const;
export type GrantVerb = (typeof GRANT_VERBS)[number];

/** The projects a grant covers: their ids, or every project (`"*"`); the same shape as a token's ProjectScope. */
export type GrantProjectScope = readonly string[] | "*";

/** A grant as listed (never its secret, which is stored only as a hash). */
export interface ReachGrant {
  readonly id: string;
  /** The environment the grant is for, as the user named it (`--for`). */
  readonly for: string;
  readonly projects: GrantProjectScope;
  readonly verbs: readonly GrantVerb[];
  /** The broadest runtime mode work started under the grant may have. */
  readonly maxRuntimeMode: RuntimeMode;
  /**
   * The profiles (names in this machine's own config and projects) work started under the grant
   * may name; empty (the default) allows none. The profile is always this machine's definition.
   */
  readonly profiles: readonly string[];
  readonly createdAt: string;
  readonly expiresAt: string;
  readonly lastUsedAt: string | null;
  readonly revokedAt: string | null;
}
