import type { PlatformKey } from "./platform.js";
import type { BinaryTarget, PackageDistribution, RegistryAgent } from "./registry-schema.js";
import {
  isPackageSpecProblem,
  parseNpmPackageSpec,
  parsePythonPackageSpec,
  type NpmPackageSpec,
  type PythonPackageSpec,
} from "./package-spec.js";

/** How an agent gets onto this machine. */
export type DistributionKind = "binary" | "npx" | "uvx";

/** A package manager an npx or uvx distribution needs. */
export type RunnerName = "npm" | "uv";

/** The distribution chosen for this machine. */
export type SelectedDistribution =
  | { readonly kind: "binary"; readonly platform: PlatformKey; readonly target: BinaryTarget }
  | { readonly kind: "npx"; readonly distribution: PackageDistribution; readonly package: NpmPackageSpec }
  | { readonly kind: "uvx"; readonly distribution: PackageDistribution; readonly package: PythonPackageSpec };

export type DistributionChoice =
  | { readonly ok: true; readonly selected: SelectedDistribution }
  | { readonly ok: false; readonly state: "unsupported"; readonly message: string }
  | {
      readonly ok: false;
      readonly state: "missing_runner";
      readonly runners: readonly RunnerName[];
      readonly message: string;
    };

/** Lazily answers "is this runner installed?", so binary agents never trigger a PATH lookup. */
export type RunnerProbe = (runner: RunnerName) => Promise<boolean>;

/**
 * Preference is binary → npx → uvx (a pinned, checksummed binary needs nothing else on the
 * machine). A package distribution is skipped when its runner is missing and a later one is
 * usable; only when none is usable does the answer become `missing_runner`.
 */
export async function selectDistribution(
  agent: RegistryAgent,
  platform: PlatformKey | null,
  hasRunner: RunnerProbe,
): Promise<DistributionChoice> {
  const { binary, npx, uvx } = agent.distribution;
  const target = platform === null ? undefined : binary?.[platform];
  if (platform !== null && target !== undefined) return { ok: true, selected: { kind: "binary", platform, target } };

  const missing: RunnerName[] = [];
  if (npx !== undefined) {
    const spec = parseNpmPackageSpec(npx.package);
    if (!isPackageSpecProblem(spec)) {
      if (await hasRunner("npm")) return { ok: true, selected: { kind: "npx", distribution: npx, package: spec } };
      missing.push("npm");
    }
  }
  if (uvx !== undefined) {
    const spec = parsePythonPackageSpec(uvx.package);
    if (!isPackageSpecProblem(spec)) {
      if (await hasRunner("uv")) return { ok: true, selected: { kind: "uvx", distribution: uvx, package: spec } };
      missing.push("uv");
    }
  }
  if (missing.length > 0) {
    return {
      ok: false,
      state: "missing_runner",
      runners: missing,
      message: `${agent.id} is distributed through ${missing.map((r) => (r === "npm" ? "npm (npx)" : "uv (uvx)")).join(" or ")}, which is not installed. Install ${missing.join(" or ")} and try again.`,
    };
  }
  const platforms = Object.keys(binary ?? {});
  return {
    ok: false,
    state: "unsupported",
    message:
      `${agent.id} has no distribution for ${platform ?? `this platform (${process.platform}-${process.arch})`}` +
      (platforms.length > 0 ? `; binaries exist for ${platforms.join(", ")}.` : "."),
  };
}

/** The kinds an agent declares that could apply here, in preference order (for display). */
export function declaredKinds(agent: RegistryAgent, platform: PlatformKey | null): DistributionKind[] {
  const kinds: DistributionKind[] = [];
  if (platform !== null && agent.distribution.binary?.[platform] !== undefined) kinds.push("binary");
  if (agent.distribution.npx !== undefined) kinds.push("npx");
  if (agent.distribution.uvx !== undefined) kinds.push("uvx");
  return kinds;
}

/** Declared args/env of the chosen distribution (what a launch, or a command override, uses). */
export function declaredLaunchSettings(selected: SelectedDistribution): {
  args: string[];
  env: Record<string, string>;
} {
  const source = selected.kind === "binary" ? selected.target : selected.distribution;
  return { args: [...(source.args ?? [])], env: { ...(source.env ?? {}) } };
}
