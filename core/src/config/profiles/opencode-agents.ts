import { parseFrontMatter } from "./front-matter.js";
import { acceptCandidate, unconvertible } from "./profile-candidate.js";
import { contentVersion, type ProfileFinding, type SourceReading } from "./profile-source.js";

type RuleLists = { allow: string[]; deny: string[]; ask: string[] };
const EFFECTS = new Set(["allow", "deny", "ask"]);

/** Fields read below; any other is reported as unconvertible. */
const CONVERTED = new Set(["name", "description", "prompt", "system", "tools", "permission", "permissions", "mode"]);

/**
 * Converts one OpenCode agent definition, read-only: an `agent` (v1) or `agents` (v2) entry of
 * opencode.json, or a `.opencode/agent(s)/*.md` file (front matter with the body as the prompt).
 * `prompt`/`system` become instructions, `tools` ({name: true|false}) and `permission` /
 * `permissions` become tool rules by OpenCode's own tool names. An OpenCode model is a
 * `provider/model` id of OpenCode's, which names no provider instance here: reported.
 */
export function convertOpenCodeAgent(
  name: string,
  fields: Record<string, unknown>,
  body: string | null,
  source: { file: string; version: string },
): SourceReading {
  const file = source.file;
  const findings: ProfileFinding[] = [];
  if (fields.disable === true) {
    const message = "disabled in OpenCode (disable: true), so not offered as a profile";
    return { profiles: [], findings: [{ kind: "skipped", profile: name, file, field: "disable", message }] };
  }
  const candidate: Record<string, unknown> = { name, description: fields.description };
  const prompt = body !== null && body !== "" ? body : (fields.prompt ?? fields.system);
  if (typeof prompt === "string" && /^\{file:[^}]*\}$/.test(prompt.trim()))
    findings.push(
      unconvertible(file, name, "prompt", "reads its prompt from another file ({file:...}), which is not followed"),
    );
  else if (typeof prompt === "string" && prompt.trim() !== "") candidate.instructions = prompt.trim();

  const rules: RuleLists = { allow: [], deny: [], ask: [] };
  toolSwitches(fields.tools, rules, (message) => findings.push(unconvertible(file, name, "tools", message)));
  permissionMap(fields.permission, rules, (message) => findings.push(unconvertible(file, name, "permission", message)));
  permissionList(fields.permissions, rules, (message) =>
    findings.push(unconvertible(file, name, "permissions", message)),
  );
  if (rules.allow.length + rules.deny.length + rules.ask.length > 0) candidate.tools = { ...rules, allowOnly: false };

  for (const field of Object.keys(fields)) {
    if (field === "disable" || CONVERTED.has(field)) continue;
    const why =
      field === "model"
        ? `"${String(fields.model)}" is an OpenCode provider/model id, not a provider instance here: the profile inherits the caller's provider and model (set a target in config.json or .switchyard/agents to choose one)`
        : "is an OpenCode agent field profiles do not carry";
    findings.push(unconvertible(file, name, field, why));
  }
  return acceptCandidate(candidate, { kind: "opencode", ...source }, findings);
}

/** A `.opencode/agent(s)/<name>.md` file. */
export function convertOpenCodeAgentFile(name: string, file: string, text: string): SourceReading {
  let parsed;
  try {
    parsed = parseFrontMatter(text);
  } catch (error) {
    const message = `not an OpenCode agent file: ${(error as Error).message}`;
    return { profiles: [], findings: [{ kind: "invalid", profile: name, file, field: null, message }] };
  }
  return convertOpenCodeAgent(name, parsed.attributes, parsed.body, { file, version: contentVersion(text) });
}

/** The `agent` and `agents` entries of an opencode.json, each versioned by its own JSON. */
export function convertOpenCodeConfig(file: string, config: unknown): SourceReading {
  const reading: SourceReading = { profiles: [], findings: [] };
  if (typeof config !== "object" || config === null) return reading;
  for (const key of ["agent", "agents"] as const) {
    const entries = (config as Record<string, unknown>)[key];
    if (entries === undefined) continue;
    if (typeof entries !== "object" || entries === null || Array.isArray(entries)) {
      const message = `"${key}" is not a mapping of agent names to definitions`;
      reading.findings.push({ kind: "invalid", profile: null, file, field: key, message });
      continue;
    }
    for (const [name, entry] of Object.entries(entries as Record<string, unknown>)) {
      if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
        const message = `${key}.${name} is not an agent definition`;
        reading.findings.push({ kind: "invalid", profile: name, file, field: key, message });
        continue;
      }
      const converted = convertOpenCodeAgent(name, entry as Record<string, unknown>, null, {
        file,
        version: contentVersion(JSON.stringify(entry)),
      });
      reading.profiles.push(...converted.profiles);
      reading.findings.push(...converted.findings);
    }
  }
  return reading;
}

/** v1 `tools: { write: false, bash: true }`. */
function toolSwitches(value: unknown, rules: RuleLists, report: (message: string) => void): void {
  if (value === undefined) return;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    report("is not a mapping of tool names to true or false");
    return;
  }
  for (const [tool, enabled] of Object.entries(value)) {
    if (enabled === true) rules.allow.push(tool);
    else if (enabled === false) rules.deny.push(tool);
    else report(`${tool}: ${JSON.stringify(enabled)} is neither true nor false`);
  }
}

/** v1 `permission: { edit: "deny", bash: "ask" | { "git push*": "deny" } }`. */
function permissionMap(value: unknown, rules: RuleLists, report: (message: string) => void): void {
  if (value === undefined) return;
  if (typeof value === "string" && EFFECTS.has(value)) {
    rules[value as keyof RuleLists].push("*");
    return;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    report("is neither allow, ask, deny nor a mapping of tools to them");
    return;
  }
  for (const [tool, effect] of Object.entries(value)) {
    if (typeof effect === "string" && EFFECTS.has(effect)) rules[effect as keyof RuleLists].push(tool);
    else if (typeof effect === "object" && effect !== null && !Array.isArray(effect)) {
      for (const [pattern, patternEffect] of Object.entries(effect)) {
        if (typeof patternEffect === "string" && EFFECTS.has(patternEffect))
          rules[patternEffect as keyof RuleLists].push(`${tool}(${pattern})`);
        else report(`${tool}.${pattern}: ${JSON.stringify(patternEffect)} is not allow, ask or deny`);
      }
    } else report(`${tool}: ${JSON.stringify(effect)} is not allow, ask or deny`);
  }
}

/** v2 `permissions: [{ action: "shell", resource: "*", effect: "deny" }]`. */
function permissionList(value: unknown, rules: RuleLists, report: (message: string) => void): void {
  if (value === undefined) return;
  if (!Array.isArray(value)) {
    report("is not a list of { action, resource, effect } rules");
    return;
  }
  for (const rule of value as unknown[]) {
    const { action, resource, effect } = (rule ?? {}) as Record<string, unknown>;
    if (typeof action !== "string" || typeof effect !== "string" || !EFFECTS.has(effect)) {
      report(`${JSON.stringify(rule)} is not an { action, resource, effect } rule with effect allow, ask or deny`);
      continue;
    }
    const scoped = typeof resource === "string" && resource !== "*" ? `${action}(${resource})` : action;
    rules[effect as keyof RuleLists].push(scoped);
  }
}
