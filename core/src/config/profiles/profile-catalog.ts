import { readdir, readFile, stat } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { convertClaudeAgent } from "./claude-agents.js";
import { convertOpenCodeAgentFile, convertOpenCodeConfig } from "./opencode-agents.js";
import type { Profile } from "./profile-schema.js";
import {
  contentVersion,
  type ProfileCatalog,
  type ProfileFinding,
  type SourcedProfile,
  type SourceReading,
} from "./profile-source.js";
import { untrustedFields } from "./profile-trust.js";
import { parseJsoncDocument } from "../../util/jsonc-edit.js";
import { readSwitchyardAgent } from "./switchyard-agents.js";

/** A definition file larger than this is not read (a profile is a page of text, not a data set). */
const MAX_DEFINITION_BYTES = 1024 * 1024;

/** Where profiles are read from: the user's config and, when the work has one, a project's folder. */
export interface ProfilePlaces {
  readonly config: { readonly file: string; readonly profiles: readonly Profile[] };
  readonly projectRoot: string | null;
}

/**
 * Reads every profile of a place, in precedence order (the first definition of a name wins; the
 * others are reported as conflicts): the project's `.switchyard/agents/*.md`, the user's config,
 * then read-only conversions of the project's `.claude/agents/*.md`, the `agent` and `agents`
 * entries of its opencode.json and opencode.jsonc, and its `.opencode/agent(s)/**.md`. Files are read on every call, so an
 * edit is seen by the next delegation.
 */
export async function readProfileCatalog(places: ProfilePlaces): Promise<ProfileCatalog> {
  const readings: SourceReading[] = [];
  const root = places.projectRoot;
  if (root !== null) readings.push(await readFolder(join(root, ".switchyard", "agents"), false, readSwitchyardAgent));
  readings.push({
    profiles: places.config.profiles.map((profile) => ({
      profile,
      source: { kind: "config", file: places.config.file, version: contentVersion(JSON.stringify(profile)) },
    })),
    findings: [],
  });
  if (root !== null) {
    readings.push(await readFolder(join(root, ".claude", "agents"), false, convertClaudeAgent));
    // OpenCode reads both, opencode.json over opencode.jsonc: its definition of a name comes first.
    for (const name of ["opencode.json", "opencode.jsonc"]) readings.push(await readOpenCodeConfig(join(root, name)));
    for (const folder of ["agent", "agents"]) {
      const base = join(root, ".opencode", folder);
      readings.push(
        await readFolder(base, true, (file, text) =>
          convertOpenCodeAgentFile(relative(base, file).slice(0, -".md".length).split(sep).join("/"), file, text),
        ),
      );
    }
  }
  return withTrustFindings(merge(readings));
}

/** Reports every field a profile's source may not set (the delegation refuses them too). */
function withTrustFindings(catalog: ProfileCatalog): ProfileCatalog {
  const findings = [...catalog.findings];
  for (const { profile, source } of catalog.profiles)
    for (const field of untrustedFields(profile, source.kind))
      findings.push({
        kind: "untrusted",
        profile: profile.name,
        file: source.file,
        field,
        message: `sets ${field}, which only a profile in your own config.json may set (a project file comes with the repository); a delegation to it is refused. Move the profile to config.json, or remove ${field}`,
      });
  return { profiles: catalog.profiles, findings };
}

/** Keeps the first profile of each name and reports every later one as a conflict. */
function merge(readings: readonly SourceReading[]): ProfileCatalog {
  const profiles: SourcedProfile[] = [];
  const findings: ProfileFinding[] = [];
  const first = new Map<string, SourcedProfile>();
  for (const reading of readings) {
    findings.push(...reading.findings);
    for (const sourced of reading.profiles) {
      const winner = first.get(sourced.profile.name);
      if (winner === undefined) {
        first.set(sourced.profile.name, sourced);
        profiles.push(sourced);
        continue;
      }
      findings.push({
        kind: "conflict",
        profile: sourced.profile.name,
        file: sourced.source.file,
        field: "name",
        message: `defines profile "${sourced.profile.name}" again; the one in ${winner.source.file} (${winner.source.kind}) is used, rename or remove one`,
      });
    }
  }
  return { profiles, findings };
}

/** The `.md` files of a folder (and, when `nested`, its subfolders), each turned into a reading. */
async function readFolder(
  folder: string,
  nested: boolean,
  convert: (file: string, text: string) => SourceReading,
): Promise<SourceReading> {
  const reading: SourceReading = { profiles: [], findings: [] };
  for (const file of await markdownFiles(folder, nested)) {
    const text = await readDefinition(file, reading.findings);
    if (text === null) continue;
    const converted = convert(file, text);
    reading.profiles.push(...converted.profiles);
    reading.findings.push(...converted.findings);
  }
  return reading;
}

async function markdownFiles(folder: string, nested: boolean): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(folder, { withFileTypes: true });
  } catch {
    return []; // No such folder: the project defines none there.
  }
  const files: string[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(folder, entry.name);
    if (entry.isDirectory() && nested) files.push(...(await markdownFiles(path, true)));
    else if (entry.name.endsWith(".md") && (entry.isFile() || entry.isSymbolicLink())) files.push(path);
  }
  return files;
}

/** A definition file's text, or null with a finding when it cannot be read or is too large. */
async function readDefinition(file: string, findings: ProfileFinding[]): Promise<string | null> {
  try {
    const size = (await stat(file)).size;
    if (size > MAX_DEFINITION_BYTES) {
      const message = `is ${size} bytes, more than the ${MAX_DEFINITION_BYTES} a definition may have`;
      findings.push({ kind: "invalid", profile: null, file, field: null, message });
      return null;
    }
    return await readFile(file, "utf8");
  } catch (error) {
    const message = `cannot be read: ${(error as Error).message}`;
    findings.push({ kind: "invalid", profile: null, file, field: null, message });
    return null;
  }
}

async function readOpenCodeConfig(file: string): Promise<SourceReading> {
  const findings: ProfileFinding[] = [];
  let text: string | null;
  try {
    await stat(file);
    text = await readDefinition(file, findings);
  } catch {
    return { profiles: [], findings: [] };
  }
  if (text === null) return { profiles: [], findings };
  try {
    return convertOpenCodeConfig(file, parseJsoncDocument(text));
  } catch (error) {
    const message = `is not JSON (comments and trailing commas allowed): ${(error as Error).message}`;
    return { profiles: [], findings: [{ kind: "invalid", profile: null, file, field: null, message }] };
  }
}
