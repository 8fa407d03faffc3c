import type { Command } from "commander";
import { withHost } from "../open-host.js";
import { printJson, printTable } from "../output.js";

export function registerProject(program: Command): void {
  const project = program.command("project").description("Manage projects (the folders threads work in)");
  project
    .command("add <path>")
    .description("Add a folder as a project; adding the same folder again returns it, renamed when --name differs")
    .option("--name <name>", "project name (default: the folder name)")
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(async (path: string, options: { name?: string; home?: string; json?: boolean }) => {
      await withHost(options, async (host) => {
        const before = await host.projects.find(path);
        const added = await host.projects.add(path, options.name);
        if (options.json) printJson(added);
        else if (before === null)
          process.stdout.write(`Added project ${added.name} (${added.id}) at ${added.rootPath}\n`);
        else if (before.name !== added.name)
          process.stdout.write(
            `Renamed project ${added.id} at ${added.rootPath} from ${before.name} to ${added.name}\n`,
          );
        else process.stdout.write(`Project ${added.name} (${added.id}) at ${added.rootPath} already exists\n`);
      });
    });
  project
    .command("list")
    .description("List projects")
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(async (options: { home?: string; json?: boolean }) => {
      await withHost(options, async (host) => {
        const projects = await host.projects.list();
        if (options.json) printJson(projects);
        else if (projects.length === 0)
          process.stdout.write("No projects yet. Add one with: switchyard project add <path>\n");
        else
          printTable(
            ["ID", "NAME", "PATH"],
            projects.map((p) => [p.id, p.name, p.rootPath]),
          );
      });
    });
  project
    .command("remove <id-or-path>")
    .description("Remove a project no thread uses (refused while threads refer to it); the folder itself is left alone")
    .option("--home <dir>", "Switchyard home")
    .action(async (idOrPath: string, options: { home?: string }) => {
      await withHost(options, async (host) => {
        const removed = await host.projects.remove(idOrPath);
        process.stdout.write(`Removed project ${removed.name} (${removed.id}); ${removed.rootPath} was not touched.\n`);
      });
    });
}
