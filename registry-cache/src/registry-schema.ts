import { posix } from "node:path";
import { z } from "zod";
import { isRegistryError } from "./errors.js";
import { PLATFORM_KEYS, type PlatformKey } from "./platform.js";
import { isPackageSpecProblem, parseNpmPackageSpec, parsePythonPackageSpec } from "./package-spec.js";
import { checkRemoteUrl } from "./url-policy.js";

/**
 * The ACP Registry index format (registry.json), decoded defensively: the envelope must be
 * right, but a single bad agent only drops that agent (with a warning naming it and the
 * field), so one broken publisher cannot take the whole catalog down. Unknown fields are
 * stripped rather than refused, so a newer registry (e.g. `preview`) still loads.
 */

/** A per-platform binary archive. */
export interface BinaryTarget {
  /** Download URL of the archive (https; http only for loopback). */
  readonly archive: string;
  /** Command to run, relative to the extraction root (e.g. `./codex-acp`). Normalised to `/` separators. */
  readonly cmd: string;
  /** Lower-case hex SHA-256 of the archive, when the publisher declares one. */
  readonly sha256?: string;
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
}

/** An npx (npm) or uvx (Python) distribution: a package pinned to an exact version. */
export interface PackageDistribution {
  /** `name@1.2.3` for npx; `name==1.2.3` or `name@1.2.3` for uvx. */
  readonly package: string;
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
}

/** How an agent is distributed; at least one of the three is present. */
export interface AgentDistribution {
  readonly binary?: Partial<Record<PlatformKey, BinaryTarget>>;
  readonly npx?: PackageDistribution;
  readonly uvx?: PackageDistribution;
}

/** One agent of the registry index. */
export interface RegistryAgent {
  /** `^[a-z0-9][a-z0-9._-]*$`; used as a directory name in the cache. */
  readonly id: string;
  readonly name: string;
  /** Semver `X.Y.Z` with optional pre-release/build; used as a directory name in the cache. */
  readonly version: string;
  readonly description: string;
  readonly repository?: string;
  readonly website?: string;
  readonly authors?: readonly string[];
  readonly license?: string;
  readonly icon?: string;
  readonly distribution: AgentDistribution;
}

/** The decoded index. */
export interface RegistryIndex {
  /** The index format version (semver string, `1.0.0` today). */
  readonly version: string;
  readonly agents: readonly RegistryAgent[];
  /** Registry "extensions" (same record shape as agents); kept but not searched. */
  readonly extensions: readonly RegistryAgent[];
}

/** An agent the decoder refused, reported to the logger and to callers. */
export interface DroppedAgent {
  /** The entry's `id` when it had a string one, else `#<position>`. */
  readonly agentId: string;
  /** Dotted path of the first bad field, e.g. `distribution.binary.linux-x86_64.sha256`. */
  readonly field: string;
  readonly problem: string;
}

export const AGENT_ID_PATTERN = /^[a-z0-9][a-z0-9._-]*$/;
const VERSION_PATTERN = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;
const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
const MAX_AGENTS = 4096;

export function isValidAgentId(id: string): boolean {
  return id.length <= 128 && AGENT_ID_PATTERN.test(id);
}

/** Human-facing links are kept only when they are https without credentials; otherwise dropped. */
const displayUrl = z
  .string()
  .max(2048)
  .optional()
  .transform((value) => (value !== undefined && isHttpsDisplayUrl(value) ? value : undefined));

function isHttpsDisplayUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "https:" && url.username === "" && url.password === "";
  } catch {
    return false;
  }
}

const downloadUrl = z.string().superRefine((value, ctx) => {
  try {
    checkRemoteUrl(value, "archive");
  } catch (error) {
    ctx.addIssue({ code: "custom", message: isRegistryError(error) ? error.message : String(error) });
  }
});

const args = z.array(z.string().max(8192)).max(256);
const env = z.record(
  z.string().regex(ENV_NAME_PATTERN, "environment variable names must match [A-Za-z_][A-Za-z0-9_]*"),
  z.string().max(8192),
);

/**
 * `cmd` is resolved inside the extraction root; refusing absolute and `..` forms here makes a
 * hostile index fail early and loudly, and the installer checks the real path again.
 */
const relativeCommand = z
  .string()
  .min(1)
  .max(1024)
  .transform((value) => value.replace(/\\/g, "/"))
  .superRefine((value, ctx) => {
    if (value.startsWith("/") || /^[A-Za-z]:/.test(value)) {
      ctx.addIssue({ code: "custom", message: "must be relative to the archive root" });
      return;
    }
    const normalized = posix.normalize(value);
    if (normalized === "." || normalized === ".." || normalized.startsWith("../") || value.split("/").includes("..")) {
      ctx.addIssue({ code: "custom", message: "must stay inside the archive root (no '..')" });
    }
  });

const binaryTarget = z.object({
  archive: downloadUrl,
  cmd: relativeCommand,
  sha256: z
    .string()
    .regex(/^[a-fA-F0-9]{64}$/, "must be 64 hex characters")
    .transform((value) => value.toLowerCase())
    .optional(),
  args: args.optional(),
  env: env.optional(),
});

// z.object strips keys it does not know, so a platform the registry adds later is ignored
// instead of failing the whole agent.
const binaryTargets = z.object(
  Object.fromEntries(PLATFORM_KEYS.map((key) => [key, binaryTarget.optional()])) as Record<
    PlatformKey,
    z.ZodOptional<typeof binaryTarget>
  >,
);

const npxDistribution = z.object({
  package: z.string().superRefine((value, ctx) => {
    const parsed = parseNpmPackageSpec(value);
    if (isPackageSpecProblem(parsed)) ctx.addIssue({ code: "custom", message: parsed });
  }),
  args: args.optional(),
  env: env.optional(),
});

const uvxDistribution = z.object({
  package: z.string().superRefine((value, ctx) => {
    const parsed = parsePythonPackageSpec(value);
    if (isPackageSpecProblem(parsed)) ctx.addIssue({ code: "custom", message: parsed });
  }),
  args: args.optional(),
  env: env.optional(),
});

const distribution = z
  .object({ binary: binaryTargets.optional(), npx: npxDistribution.optional(), uvx: uvxDistribution.optional() })
  .refine((value) => value.binary !== undefined || value.npx !== undefined || value.uvx !== undefined, {
    message: "declares none of binary, npx or uvx",
  });

const agentSchema = z.object({
  id: z.string().max(128).regex(AGENT_ID_PATTERN, "must match ^[a-z0-9][a-z0-9._-]*$"),
  name: z.string().min(1).max(200),
  version: z.string().max(128).regex(VERSION_PATTERN, "must be an exact semver version such as 1.2.3"),
  description: z.string().max(4000),
  repository: displayUrl,
  website: displayUrl,
  authors: z.array(z.string().max(200)).max(64).optional(),
  license: z.string().max(200).optional(),
  icon: displayUrl,
  distribution,
});

const envelopeSchema = z.object({
  version: z.string().min(1).max(64),
  agents: z.array(z.unknown()).max(MAX_AGENTS),
  extensions: z.array(z.unknown()).max(MAX_AGENTS).optional(),
});

/** Result of decoding, or why the envelope itself is unusable. */
export type DecodeIndexResult =
  | { readonly ok: true; readonly index: RegistryIndex; readonly dropped: readonly DroppedAgent[] }
  | { readonly ok: false; readonly problem: string };

/** Decodes parsed JSON into an index, dropping (and reporting) invalid agents. */
export function decodeRegistryIndex(json: unknown): DecodeIndexResult {
  const envelope = envelopeSchema.safeParse(json);
  if (!envelope.success) {
    const issue = envelope.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? "the top level" : `"${issue.path.join(".")}"`;
    return {
      ok: false,
      problem: `${where}: ${issue?.message ?? "invalid"} (expected {version, agents[], extensions?})`,
    };
  }
  const dropped: DroppedAgent[] = [];
  const agents = decodeAgents(envelope.data.agents, dropped);
  const extensions = decodeAgents(envelope.data.extensions ?? [], dropped);
  return { ok: true, index: { version: envelope.data.version, agents, extensions }, dropped };
}

function decodeAgents(entries: readonly unknown[], dropped: DroppedAgent[]): RegistryAgent[] {
  const agents: RegistryAgent[] = [];
  const seen = new Set<string>();
  entries.forEach((entry, position) => {
    const rawId =
      typeof entry === "object" && entry !== null && typeof (entry as { id?: unknown }).id === "string"
        ? (entry as { id: string }).id
        : `#${position}`;
    const parsed = agentSchema.safeParse(entry);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      dropped.push({
        agentId: rawId,
        field: issue?.path.map(String).join(".") || "(entry)",
        problem: issue?.message ?? "invalid",
      });
      return;
    }
    if (seen.has(parsed.data.id)) {
      dropped.push({ agentId: rawId, field: "id", problem: "duplicate id; the first entry is kept" });
      return;
    }
    seen.add(parsed.data.id);
    agents.push(toRegistryAgent(parsed.data));
  });
  return agents;
}

type ParsedAgent = z.output<typeof agentSchema>;

// Rebuilds the agent without `undefined`-valued optional keys, so JSON output stays clean.
function toRegistryAgent(parsed: ParsedAgent): RegistryAgent {
  const binary: Partial<Record<PlatformKey, BinaryTarget>> = {};
  for (const key of PLATFORM_KEYS) {
    const target = parsed.distribution.binary?.[key];
    if (target !== undefined) binary[key] = withoutUndefined(target);
  }
  const dist: AgentDistribution = withoutUndefined({
    binary: parsed.distribution.binary === undefined ? undefined : binary,
    npx: parsed.distribution.npx === undefined ? undefined : withoutUndefined(parsed.distribution.npx),
    uvx: parsed.distribution.uvx === undefined ? undefined : withoutUndefined(parsed.distribution.uvx),
  });
  return withoutUndefined({ ...parsed, distribution: dist });
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
