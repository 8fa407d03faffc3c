import { basename } from "node:path";
import { parseFrontMatter } from "./front-matter.js";
import { acceptCandidate } from "./profile-candidate.js";
import { contentVersion, type SourceReading } from "./profile-source.js";

/**
 * A project's `.switchyard/agents/<name>.md`: the profile's fields as YAML front matter, its
 * instructions as the body, its name the file's unless the front matter sets one.
 */
export function readSwitchyardAgent(file: string, text: string): SourceReading {
  const source = { kind: "switchyard" as const, file, version: contentVersion(text) };
  let parsed;
  try {
    parsed = parseFrontMatter(text);
  } catch (error) {
    const message = `not a profile file: ${(error as Error).message}`;
    return { profiles: [], findings: [{ kind: "invalid", profile: null, file, field: null, message }] };
  }
  const fields = parsed.attributes;
  const name = fields.name ?? basename(file, ".md");
  if (fields.instructions !== undefined && parsed.body !== "") {
    const message = "sets instructions both in the front matter and as the body; keep one (the body)";
    return {
      profiles: [],
      findings: [{ kind: "invalid", profile: String(name), file, field: "instructions", message }],
    };
  }
  const candidate = { ...fields, name, ...(parsed.body !== "" ? { instructions: parsed.body } : {}) };
  return acceptCandidate(candidate, source, []);
}
