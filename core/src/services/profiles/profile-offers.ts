import { inject, injectable } from "tsyringe";
import type { SourcedProfile } from "../../config/profiles/profile-source.js";
import { OrchestratorFailure } from "../../engine/orchestrator-failure.js";
import {
  ProviderCatalogToken,
  type ProviderAvailability,
  type ProviderCatalog,
} from "../../engine/provider-catalog.js";
import { decideProfileSupport } from "../../policy/index.js";
import type { Caller } from "../caller.js";
import { profileHarness, sessionWants } from "./profile-harness.js";
import { ProfileLibrary } from "./profile-library.js";

/** Whether one provider instance the profile could run on can carry what it asks of its sessions. */
export interface ProfileCarrier {
  readonly providerInstanceId: string;
  /** The provider can run work now (the provider snapshot). */
  readonly available: boolean;
  /** It can enforce the profile's tool rules and apply its harness settings. */
  readonly canCarry: boolean;
  /** When it cannot: the capability it lacks (`tools.rules.deny`, `sessions.harnessHome`). */
  readonly capability?: string;
  /** Why not, or what it leaves out (allow rules it cannot apply). */
  readonly reason?: string;
}

/** A profile as offered to a caller: what picks it, and where it can run. */
export interface ProfileOffer {
  readonly sourced: SourcedProfile;
  /** The providers the profile could run on (its target's, else every configured one) and whether each carries it. */
  readonly carriers: readonly ProfileCarrier[];
  /** Why no provider will take it (a project file setting what only config.json may), or null. */
  readonly refusal: string | null;
}

/**
 * The profiles a caller may use, each with the providers it could run on and whether they can
 * carry it: answered by the same trust rule and shared policy decision a delegation or launch
 * takes, so a model or a person does not pick a profile that would be refused.
 */
@injectable()
export class ProfileOffers {
  constructor(
    private readonly library: ProfileLibrary,
    @inject(ProviderCatalogToken) private readonly providers: ProviderCatalog,
  ) {}

  async forCaller(caller: Caller, projectId?: string): Promise<ProfileOffer[]> {
    const [catalog, snapshot] = await Promise.all([
      this.library.catalogFor(caller, projectId),
      this.providers.snapshotAll(),
    ]);
    // A linked environment sees only the profiles its grant lists, never this machine's whole catalog.
    const granted = caller.kind === "environment" ? (caller.grant?.profiles ?? []) : null;
    return catalog.profiles
      .filter((sourced) => granted === null || granted.includes(sourced.profile.name))
      .map((sourced) => offer(sourced, snapshot));
  }
}

function offer(sourced: SourcedProfile, snapshot: readonly ProviderAvailability[]): ProfileOffer {
  let harness;
  try {
    harness = profileHarness(sourced);
  } catch (error) {
    if (error instanceof OrchestratorFailure) return { sourced, carriers: [], refusal: error.message };
    throw error;
  }
  const target = sourced.profile.target ?? {};
  const candidates = snapshot.filter(
    (provider) =>
      provider.enabled &&
      (target.providerInstanceId === undefined || provider.instanceId === target.providerInstanceId) &&
      (target.driverKind === undefined || provider.driver === target.driverKind),
  );
  const carriers = candidates.map((provider): ProfileCarrier => {
    const base = { providerInstanceId: provider.instanceId, available: provider.available };
    if (harness === null) return { ...base, canCarry: true };
    const decision = decideProfileSupport(
      provider.capabilities,
      sessionWants(harness),
      `Provider instance "${provider.instanceId}"`,
    );
    if (!decision.ok) return { ...base, canCarry: false, capability: decision.capability, reason: decision.reason };
    return decision.notes.length > 0
      ? { ...base, canCarry: true, reason: decision.notes.join(" ") }
      : { ...base, canCarry: true };
  });
  return { sourced, carriers, refusal: null };
}
