import {
  SPECIFICATION_VERSION,
  type CommandGroup,
  type PluginDefinition,
  type PluginManifest,
  type PluginRoutes,
  type ProviderDriver,
} from "../spec/index.js";
import { checkCommandGroups } from "./command-groups.js";
import { manifestCommands } from "./manifest.js";
import type { SpecVersionResolver } from "./spec-version-resolver.js";

/** A definition the host can use: current spec version, drivers and command groups checked. */
export interface CheckedDefinition {
  readonly definition: PluginDefinition;
  readonly drivers: readonly ProviderDriver<unknown>[];
  readonly commands: readonly CommandGroup[];
  /** The HTTP API routes it contributes, not created yet (`create` runs per server). */
  readonly routes: PluginRoutes | null;
  /** The literal it was written for, when an adapter converted it. */
  readonly adaptedFrom: string | null;
  /** The adapter's one warning, when it was converted. */
  readonly warning: string | null;
}

/** Why a definition is refused. */
export interface DefinitionProblem {
  readonly code: "spec_incompatible" | "definition_invalid";
  readonly problem: string;
}

/**
 * Checks a plugin's default export before any of its drivers or commands is used: resolves its
 * spec version to the host's, then checks every driver (current literal, listed in the
 * manifest) and every command group (well formed, listed, and every listed one defined).
 */
export function checkDefinition(
  value: unknown,
  manifest: PluginManifest,
  resolver: SpecVersionResolver,
): CheckedDefinition | DefinitionProblem {
  if (typeof value !== "object" || value === null) {
    return {
      code: "definition_invalid",
      problem: "its entry module has no default export (expected definePlugin({ drivers }))",
    };
  }
  const resolved = resolver.resolve(value);
  if ("problem" in resolved) return { code: "spec_incompatible", problem: resolved.problem };
  const candidate = resolved.definition as Partial<PluginDefinition>;
  const drivers = candidate.drivers ?? [];
  if (!Array.isArray(drivers))
    return { code: "definition_invalid", problem: "its definition's drivers is not an array" };
  const routes = candidate.routes ?? null;
  if (
    routes !== null &&
    (typeof routes !== "object" || typeof (routes as Partial<PluginRoutes>).create !== "function")
  ) {
    return {
      code: "definition_invalid",
      problem: "its definition's routes has no create() (expected defineRoutes({ create }))",
    };
  }
  if (routes !== null && manifest.routes !== true)
    return {
      code: "definition_invalid",
      problem: 'its definition has routes but its manifest does not declare "routes": true',
    };
  if (routes === null && manifest.routes === true)
    return {
      code: "definition_invalid",
      problem:
        'its manifest declares "routes": true but its definition has no routes (expected definePlugin({ routes: defineRoutes(…) }))',
    };
  if (drivers.length === 0 && (candidate.commands ?? []).length === 0 && routes === null) {
    return { code: "definition_invalid", problem: "its definition has no drivers, no commands and no routes" };
  }
  for (const driver of drivers as unknown[]) {
    const d = driver as Partial<ProviderDriver>;
    if (typeof d !== "object" || d === null || typeof d.driverKind !== "string" || typeof d.create !== "function") {
      return { code: "definition_invalid", problem: "a driver lacks driverKind or create()" };
    }
    if (d.specificationVersion !== SPECIFICATION_VERSION) {
      return {
        code: "spec_incompatible",
        problem: `driver "${d.driverKind}" declares specificationVersion ${JSON.stringify(d.specificationVersion)}, not "${SPECIFICATION_VERSION}"`,
      };
    }
    if (!manifest.drivers.includes(d.driverKind)) {
      return {
        code: "definition_invalid",
        problem: `driver "${d.driverKind}" is not listed in the manifest's drivers (${manifest.drivers.join(", ")})`,
      };
    }
  }
  const commands = checkCommandGroups(
    candidate.commands,
    manifestCommands(manifest).map((command) => command.name),
  );
  if ("problem" in commands) return { code: "definition_invalid", problem: commands.problem };
  return {
    definition: resolved.definition,
    drivers: drivers as ProviderDriver<unknown>[],
    commands: commands.groups,
    routes,
    adaptedFrom: resolved.adaptedFrom,
    warning: resolved.warning,
  };
}
