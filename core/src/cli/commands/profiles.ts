import type { Command } from "commander";
import { resolve } from "node:path";
import { loadConfig } from "../../config/config-loader.js";
import { pathsFor, resolveHome } from "../../config/paths.js";
import { readProfileCatalog } from "../../config/profiles/profile-catalog.js";
import { isProblem } from "../../config/profiles/profile-source.js";
import { CliError, EXIT, printJson, printTable, style } from "../output.js";

export function registerProfiles(program: Command): void {
  const profiles = program
    .command("profiles")
    .description("Agent profiles delegate_task takes as `profile` (docs/profiles.md)");
  profiles
    .command("list")
    .description(
      "List the profiles of the config and of a project (.switchyard/agents, and converted .claude/agents and OpenCode agents), with their source",
    )
    .option("--home <dir>", "Switchyard home")
    .option("--project <dir>", "the project folder whose agent files to read (default: the current folder)")
    .option("--check", "also print conflicts and fields that could not be converted, and exit 1 if there are any")
    .option("--json", "print JSON")
    .action(async (options: { home?: string; project?: string; check?: boolean; json?: boolean }) => {
      const paths = pathsFor(resolveHome(options.home));
      const config = loadConfig(paths.configFile);
      const catalog = await readProfileCatalog({
        config: { file: paths.configFile, profiles: config.profiles },
        projectRoot: resolve(options.project ?? process.cwd()),
      });
      const problems = catalog.findings.filter(isProblem);
      if (options.json) {
        printJson({
          profiles: catalog.profiles.map(({ profile, source }) => ({ ...profile, source })),
          findings: catalog.findings,
        });
      } else if (catalog.profiles.length === 0) {
        process.stdout.write(
          `No profiles. Add them to ${paths.configFile} ("profiles": [...]) or as .switchyard/agents/<name>.md in a project (docs/profiles.md).\n`,
        );
      } else {
        printTable(
          ["NAME", "SOURCE", "FILE", "DESCRIPTION"],
          catalog.profiles.map(({ profile, source }) => [
            profile.name,
            source.kind,
            source.file,
            oneLine(profile.description),
          ]),
        );
      }
      if (!options.json) {
        const shown = options.check ? catalog.findings : [];
        for (const finding of shown) {
          const label = isProblem(finding) ? style(`${finding.kind}:`, "yellow") : style(`${finding.kind}:`, "dim");
          const field = finding.field === null ? "" : ` ${finding.field}`;
          const profile = finding.profile === null ? "" : ` (profile ${finding.profile})`;
          process.stdout.write(`${label} ${finding.file}${profile}${field}: ${finding.message}\n`);
        }
        if (!options.check && problems.length > 0)
          process.stdout.write(
            `${style("note:", "dim")} ${problems.length} conflict(s) or field(s) not converted; run with --check to see them\n`,
          );
      }
      if (options.check && problems.length > 0)
        throw new CliError(
          `${problems.length} profile problem(s) found; fix the files named above, or rename a profile defined twice.`,
          EXIT.failed,
        );
    });
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
