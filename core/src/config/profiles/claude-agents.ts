import { basename } from "node:path";
import type { RuntimeMode } from "../../spec/index.js";
import { parseFrontMatter } from "./front-matter.js";
import { acceptCandidate, toolList, unconvertible } from "./profile-candidate.js";
import { contentVersion, type ProfileFinding, type SourceReading } from "./profile-source.js";

/** Claude Code's permission modes that are a runtime mode ceiling here. */
const RUNTIME_MODE_OF_PERMISSION_MODE: Record<string, RuntimeMode> = {
  default: "approval-required",
  acceptEdits: "auto-accept-edits",
  bypassPermissions: "full-access",
};

/** Fields read below; any other front matter field is reported as unconvertible. */
const CONVERTED = new Set(["name", "description", "tools", "disallowedTools", "model", "permissionMode"]);

/**
 * Converts a Claude Code agent file (`.claude/agents/<name>.md`), read-only: name, description,
 * the body as instructions, `tools` (only these) and `disallowedTools` as tool rules, and
 * `permissionMode` as a mode ceiling. A model other than `inherit` is a Claude alias or id that
 * names no provider instance here, so it is reported rather than guessed.
 */
export function convertClaudeAgent(file: string, text: string): SourceReading {
  const source = { kind: "claude" as const, file, version: contentVersion(text) };
  let parsed;
  try {
    parsed = parseFrontMatter(text);
  } catch (error) {
    const message = `not a Claude Code agent file: ${(error as Error).message}`;
    return { profiles: [], findings: [{ kind: "invalid", profile: null, file, field: null, message }] };
  }
  const fields = parsed.attributes;
  const name = typeof fields.name === "string" ? fields.name : basename(file, ".md");
  const findings: ProfileFinding[] = [];
  const candidate: Record<string, unknown> = { name, description: fields.description };
  if (parsed.body !== "") candidate.instructions = parsed.body;

  const allow = fields.tools === undefined ? [] : toolList(fields.tools);
  const deny = fields.disallowedTools === undefined ? [] : toolList(fields.disallowedTools);
  if (allow === null)
    findings.push(unconvertible(file, name, "tools", "is neither a list nor a comma-separated string"));
  if (deny === null)
    findings.push(unconvertible(file, name, "disallowedTools", "is neither a list nor a comma-separated string"));
  if ((allow ?? []).length > 0 || (deny ?? []).length > 0)
    candidate.tools = { allow: allow ?? [], deny: deny ?? [], ask: [], allowOnly: (allow ?? []).length > 0 };

  if (fields.model !== undefined && fields.model !== "inherit")
    findings.push(
      unconvertible(
        file,
        name,
        "model",
        `"${String(fields.model)}" is a Claude model name, not a provider instance here: the profile inherits the caller's provider and model (set a target in config.json or .switchyard/agents to choose one)`,
      ),
    );

  const permissionMode = fields.permissionMode;
  if (permissionMode === "plan") candidate.maxInteractionMode = "plan";
  else if (typeof permissionMode === "string" && permissionMode in RUNTIME_MODE_OF_PERMISSION_MODE)
    candidate.maxRuntimeMode = RUNTIME_MODE_OF_PERMISSION_MODE[permissionMode];
  else if (permissionMode !== undefined)
    findings.push(
      unconvertible(
        file,
        name,
        "permissionMode",
        `"${String(permissionMode)}" has no runtime or interaction mode equivalent (default, acceptEdits, bypassPermissions and plan do)`,
      ),
    );

  for (const field of Object.keys(fields))
    if (!CONVERTED.has(field))
      findings.push(unconvertible(file, name, field, "is a Claude Code agent field profiles do not carry"));
  return acceptCandidate(candidate, source, findings);
}
