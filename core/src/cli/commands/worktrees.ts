import type { Command } from "commander";
import { WorkspaceJanitor, type WorkspaceListing } from "../../services/workspaces/workspace-janitor.js";
import { withHost } from "../open-host.js";
import { printJson, printTable, style } from "../output.js";
import { projectIdOf } from "../thread-arguments.js";

function changesText(workspace: WorkspaceListing): string {
  if (workspace.changes === null) return workspace.strategy === "scratch" ? "(scratch)" : "";
  return `${workspace.changes.commits} commit(s), ${workspace.changes.fileCount} file(s) +${workspace.changes.insertions} -${workspace.changes.deletions}`;
}

function statusText(workspace: WorkspaceListing): string {
  if (workspace.status === "failed") return style("failed", "red");
  if (workspace.pending !== null) return style(`${workspace.pending} under way`, "yellow");
  return workspace.disposition ?? workspace.status;
}

/**
 * `switchyard worktrees list|prune`: the worktrees and scratch folders threads work in, read
 * from the home directly (beside a running server, like `schedules list`), and their removal
 * once retention allows it. Prune never removes a workspace whose changes nobody decided on.
 */
export function registerWorktrees(program: Command): void {
  const worktrees = program
    .command("worktrees")
    .description("The git worktrees and scratch folders delegated and created threads work in");
  worktrees
    .command("list")
    .description(
      "List thread workspaces not yet removed (--all: removed ones too), newest first: folder, branch, changes, what was decided, when retention removes it",
    )
    .option("--project <id-or-path>", "only this project's")
    .option("--all", "removed ones too")
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(async (options: { project?: string; all?: boolean; home?: string; json?: boolean }) => {
      await withHost(options, async (host) => {
        const projectId = options.project !== undefined ? await projectIdOf(host, options.project) : undefined;
        const janitor = host.container.resolve(WorkspaceJanitor);
        const listed = await janitor.list({
          all: options.all === true,
          ...(projectId !== undefined ? { projectId } : {}),
        });
        const orphans = await janitor.orphans();
        if (options.json) return printJson({ workspaces: listed, orphans });
        if (listed.length === 0)
          process.stdout.write(
            'No thread workspaces. delegate_task or create_threads with workspace "worktree" make them.\n',
          );
        else
          printTable(
            ["THREAD", "STRATEGY", "BRANCH", "CHANGES", "STATUS", "REMOVABLE", "PATH"],
            listed.map((workspace) => [
              workspace.threadTitle ?? workspace.threadId,
              workspace.strategy,
              workspace.branch ?? "",
              changesText(workspace),
              statusText(workspace),
              workspace.removableAt ?? "",
              workspace.path,
            ]),
          );
        if (orphans.length > 0)
          process.stdout.write(
            `\n${orphans.length} folder(s) in the workspaces folder belong to no thread; \`switchyard worktrees prune\` removes them:\n${orphans.map((path) => `  ${path}\n`).join("")}`,
          );
      });
    });
  worktrees
    .command("prune")
    .description(
      "Remove workspaces whose changes were applied, discarded or kept once their thread is settled and workspaces.retentionMs has passed (their branch too, unless kept), and folders in the workspaces folder no thread owns",
    )
    .option("--dry-run", "only say what would be removed")
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(async (options: { dryRun?: boolean; home?: string; json?: boolean }) => {
      await withHost(options, async (host) => {
        const report = await host.container.resolve(WorkspaceJanitor).prune({ dryRun: options.dryRun === true });
        if (options.json) return printJson(report);
        const verb = report.dryRun ? "Would remove" : "Removed";
        for (const entry of report.removed)
          process.stdout.write(
            `${verb} ${entry.path} (thread ${entry.threadId}${entry.branchKept ? ", branch kept" : ""})\n`,
          );
        for (const path of report.orphans) process.stdout.write(`${verb} ${path} (no thread owns it)\n`);
        if (report.removed.length === 0 && report.orphans.length === 0) process.stdout.write("Nothing to prune.\n");
      });
    });
}
