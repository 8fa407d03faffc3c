import { createHash, randomBytes } from "node:crypto";
import { inject, injectable } from "tsyringe";
import { runtimeModeRank, RUNTIME_MODES, SwitchyardError, type RuntimeMode } from "../../spec/index.js";
import { OrchestratorFailure } from "../../engine/orchestrator-failure.js";
import { TOKEN_PREFIX, type Logger, LoggerToken } from "../../logging/logger.js";
import { isStoreBusy } from "../../util/store-busy.js";
import { type EventStore, StoreToken } from "../../store/ports.js";
import { type ReachGrantRow, ReachGrantsTable } from "../../store/tables/reach-grants.js";
import { type Clock, ClockToken } from "../../util/clock.js";
import { GRANT_VERBS, type GrantProjectScope, type GrantVerb, type ReachGrant } from "../credentials/reach-grant.js";
import { ProfileName } from "../../config/profiles/profile-schema.js";
import { environmentNameProblem } from "./environment-name.js";

/** Link secrets start with this, under the token prefix, so the logger scrubs them like tokens. */
export const LINK_SECRET_PREFIX = `${TOKEN_PREFIX}link_`;

/** Why a link secret was refused. */
export type GrantRejection = "unknown" | "expired" | "revoked";

interface GrantData {
  projects: string[] | "*";
  verbs: GrantVerb[];
  maxRuntimeMode: RuntimeMode;
  /** Absent in grants issued before profiles could be granted: none. */
  profiles?: string[];
}

function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

function grantOf(row: ReachGrantRow): ReachGrant {
  const data = JSON.parse(row.data) as GrantData;
  return {
    id: row.id,
    for: row.for_name,
    projects: data.projects,
    verbs: GRANT_VERBS.filter((verb) => data.verbs.includes(verb)),
    maxRuntimeMode: data.maxRuntimeMode,
    profiles: data.profiles ?? [],
    createdAt: new Date(row.created_at).toISOString(),
    expiresAt: new Date(row.expires_at).toISOString(),
    lastUsedAt: row.last_used_at === null ? null : new Date(row.last_used_at).toISOString(),
    revokedAt: row.revoked_at === null ? null : new Date(row.revoked_at).toISOString(),
  };
}

/**
 * Grants: the user's explicit permission for another environment to act here. Issuing one
 * returns its link secret once; only the secret's SHA-256 is stored (it is 32 random bytes, so
 * the hash cannot be guessed back). Every call from a linked environment resolves its secret
 * afresh (`resolve`), so a revoked or expired grant stops the very next call, and `authorize`
 * holds it to the grant's verbs, projects and ceiling. Only the CLI on this machine issues,
 * widens or revokes grants: no tool reaches this service's writes.
 */
@injectable()
export class ReachGrants {
  private readonly table: ReachGrantsTable;

  constructor(
    @inject(StoreToken) private readonly store: EventStore,
    @inject(ClockToken) private readonly clock: Clock,
    @inject(LoggerToken) private readonly logger: Logger,
  ) {
    this.table = new ReachGrantsTable(store);
  }

  /** Issues a grant; the secret is in the result only. */
  issue(options: {
    for: string;
    projects: GrantProjectScope;
    verbs: readonly GrantVerb[];
    maxRuntimeMode: RuntimeMode;
    /** Profile names the linked environment may use here; omitted or empty: none. */
    profiles?: readonly string[];
    ttlMs: number;
  }): { grant: ReachGrant; secret: string } {
    const problem = environmentNameProblem(options.for);
    if (problem !== null)
      throw new SwitchyardError("invalid_input", `--for ${JSON.stringify(options.for)} ${problem}.`, {
        for: options.for,
      });
    if (options.verbs.length === 0)
      throw new SwitchyardError("invalid_input", `A grant needs at least one verb: ${GRANT_VERBS.join(", ")}.`, {});
    for (const verb of options.verbs) {
      if (!(GRANT_VERBS as readonly string[]).includes(verb))
        throw new SwitchyardError("invalid_input", `"${verb}" is not a grant verb; use ${GRANT_VERBS.join(", ")}.`, {
          verb,
        });
    }
    if (!(RUNTIME_MODES as readonly string[]).includes(options.maxRuntimeMode)) {
      throw new SwitchyardError(
        "invalid_input",
        `"${options.maxRuntimeMode}" is not a runtime mode; use ${RUNTIME_MODES.join(", ")}.`,
        { maxRuntimeMode: options.maxRuntimeMode },
      );
    }
    for (const profile of options.profiles ?? []) {
      if (!ProfileName.safeParse(profile).success)
        throw new SwitchyardError(
          "invalid_input",
          `--profiles: "${profile}" is not a profile name (lowercase letters, digits, '.', '_' or '-'; \`switchyard profiles list\` shows them).`,
          { profile },
        );
    }
    if (!Number.isInteger(options.ttlMs) || options.ttlMs <= 0)
      throw new SwitchyardError(
        "invalid_input",
        "A grant's lifetime must be a positive whole number of milliseconds.",
        { ttlMs: options.ttlMs },
      );
    const secret = `${LINK_SECRET_PREFIX}${randomBytes(32).toString("base64url")}`;
    const id = `grant_${randomBytes(8).toString("hex")}`;
    const now = this.clock.nowMs();
    const data: GrantData = {
      projects: options.projects === "*" ? "*" : [...new Set(options.projects)],
      verbs: GRANT_VERBS.filter((verb) => options.verbs.includes(verb)),
      maxRuntimeMode: options.maxRuntimeMode,
      profiles: [...new Set(options.profiles ?? [])],
    };
    const row = {
      id,
      secret_hash: hashSecret(secret),
      for_name: options.for,
      data: JSON.stringify(data),
      created_at: now,
      expires_at: now + options.ttlMs,
    };
    this.table.insertNow(row);
    // The row as written (unused, unrevoked): no read back, so creation stays synchronous.
    return { grant: grantOf({ ...row, last_used_at: null, revoked_at: null }), secret };
  }

  /** One grant by id, or null. */
  async get(grantId: string): Promise<ReachGrant | null> {
    const row = await this.table.byId(grantId);
    return row === null ? null : grantOf(row);
  }

  /** Every grant, newest first. */
  async list(): Promise<ReachGrant[]> {
    return (await this.table.newestFirst()).map(grantOf);
  }

  /** Revokes a grant at once; false when it was already revoked. Unknown ids are `not_found`. */
  async revoke(grantId: string): Promise<boolean> {
    if ((await this.get(grantId)) === null)
      throw new SwitchyardError("not_found", `No grant has id ${grantId}. Run \`switchyard grant list\` to see them.`, {
        grantId,
      });
    const at = this.clock.nowMs();
    // Awaited already, so the write takes its turn (after a command under way) instead of a refusal.
    return this.store.writeAsync(() => this.table.revoke(grantId, at));
  }

  /** The grant a link secret stands for, read now (so revoking stops the next call), or why not (naming a revoked or expired grant, for the audit). */
  async resolve(
    secret: string,
  ): Promise<{ grant: ReachGrant } | { rejection: GrantRejection; grantId?: string; for?: string }> {
    const row = await this.table.bySecretHash(hashSecret(secret));
    if (row === null) return { rejection: "unknown" };
    if (row.revoked_at !== null) return { rejection: "revoked", grantId: row.id, for: row.for_name };
    const now = this.clock.nowMs();
    if (now >= row.expires_at) return { rejection: "expired", grantId: row.id, for: row.for_name };
    // Bookkeeping the call does not wait for: now when the store is free, else once the command
    // under way commits.
    this.store
      .writeAsync(() => this.table.markUsed(row.id, now))
      .catch((error: unknown) => {
        if (!isStoreBusy(error)) this.logger.warn("could not note a grant's use", { error: (error as Error).message });
      });
    return { grant: grantOf({ ...row, last_used_at: now }) };
  }

  /**
   * Holds a profile a linked environment names to the grant's list: `capability_denied` naming
   * the grant's profiles (never this machine's whole catalog) when it is not on it.
   */
  authorizeProfile(grant: ReachGrant, profile: string): void {
    if (grant.profiles.includes(profile)) return;
    throw new OrchestratorFailure(
      "capability_denied",
      `Grant ${grant.id} (for ${grant.for}) does not allow profile "${profile}"; ${grant.profiles.length === 0 ? "it allows no profiles" : `it allows ${grant.profiles.map((name) => `"${name}"`).join(", ")}`}. Ask the user on this machine to issue a grant with --profiles including ${profile}.`,
      {
        grantId: grant.id,
        field: "profile",
        profile,
        reason: "profile_not_granted",
        allowedProfiles: [...grant.profiles],
      },
    );
  }

  /**
   * Holds one call to a grant: its verb, the project it touches, and the runtime mode of the
   * work it would start. Refusals are `capability_denied` (verb, project) and
   * `runtime_mode_escalation_denied` (mode), naming the grant and what it allows.
   */
  authorize(
    grant: ReachGrant,
    call: { verb: GrantVerb; projectId?: string | null; runtimeMode?: RuntimeMode | null },
  ): void {
    if (!grant.verbs.includes(call.verb)) {
      throw new OrchestratorFailure(
        "capability_denied",
        `Grant ${grant.id} (for ${grant.for}) does not allow "${call.verb}"; it allows ${grant.verbs.join(", ")}. Ask the user on this machine to issue a grant with --verbs including ${call.verb}.`,
        {
          grantId: grant.id,
          verb: call.verb,
          allowedVerbs: [...grant.verbs],
        },
      );
    }
    if (
      call.projectId !== undefined &&
      call.projectId !== null &&
      grant.projects !== "*" &&
      !grant.projects.includes(call.projectId)
    ) {
      throw new OrchestratorFailure(
        "capability_denied",
        `Grant ${grant.id} (for ${grant.for}) does not cover project ${call.projectId}; it covers ${grant.projects.join(", ")}.`,
        {
          grantId: grant.id,
          projectId: call.projectId,
          allowedProjects: [...grant.projects],
        },
      );
    }
    if (
      call.runtimeMode !== undefined &&
      call.runtimeMode !== null &&
      runtimeModeRank(call.runtimeMode) > runtimeModeRank(grant.maxRuntimeMode)
    ) {
      throw new OrchestratorFailure(
        "runtime_mode_escalation_denied",
        `Grant ${grant.id} (for ${grant.for}) allows work up to "${grant.maxRuntimeMode}", not "${call.runtimeMode}".`,
        {
          grantId: grant.id,
          runtimeMode: call.runtimeMode,
          maxRuntimeMode: grant.maxRuntimeMode,
        },
      );
    }
  }
}
