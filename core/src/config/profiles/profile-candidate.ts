import { formatIssuePath } from "../config-loader.js";
import { ProfileSchema } from "./profile-schema.js";
import type { ProfileFinding, ProfileSource, SourceReading } from "./profile-source.js";

/**
 * Validates what a source made of one definition: a profile with its source, or an `invalid`
 * finding naming each field that is wrong. Findings gathered while converting travel with it.
 */
export function acceptCandidate(
  candidate: Record<string, unknown>,
  source: ProfileSource,
  findings: ProfileFinding[],
): SourceReading {
  const name = typeof candidate.name === "string" ? candidate.name : null;
  const parsed = ProfileSchema.safeParse(candidate);
  if (!parsed.success) {
    const reasons = parsed.error.issues.map((issue) => `${formatIssuePath(issue.path)}: ${issue.message}`);
    findings.push({
      kind: "invalid",
      profile: name,
      file: source.file,
      field: parsed.error.issues[0] ? formatIssuePath(parsed.error.issues[0].path) : null,
      message: `not a usable profile (${reasons.join("; ")})`,
    });
    return { profiles: [], findings };
  }
  return { profiles: [{ profile: parsed.data, source }], findings };
}

/** A finding about one field of one definition. */
export function unconvertible(file: string, profile: string | null, field: string, message: string): ProfileFinding {
  return { kind: "unconvertible", profile, file, field, message };
}

/** A tool list written as a YAML list or as Claude Code's comma-separated string. */
export function toolList(value: unknown): string[] | null {
  if (typeof value === "string")
    return value
      .split(",")
      .map((tool) => tool.trim())
      .filter((tool) => tool !== "");
  if (Array.isArray(value) && value.every((tool) => typeof tool === "string"))
    return value.map((tool) => tool.trim()).filter((tool) => tool !== "");
  return null;
}
