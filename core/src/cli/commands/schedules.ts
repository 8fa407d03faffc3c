import type { Command } from "commander";
import { OWNER_AUTHORITY, type Caller } from "../../services/caller.js";
import { ScheduledTaskService } from "../../services/scheduling/scheduled-task-service.js";
import type { ScheduledTaskView } from "../../services/scheduling/scheduled-task-view.js";
import { withHost } from "../open-host.js";
import { CliError, EXIT, printJson, printTable, style } from "../output.js";
import { projectIdOf } from "../thread-arguments.js";

/**
 * The home's owner at a terminal on this machine, outside any thread: who can read the home's
 * files (the database, the key that derives webhook URLs) anyway, so it sees and manages every
 * task, and a task it resumes runs under the owner's authority, which no revoke ends.
 */
const TERMINAL_OWNER: Caller = {
  kind: "client",
  threadId: null,
  projectId: null,
  providerInstanceId: null,
  providerSessionId: null,
  requestScope: "cli:terminal",
  capabilities: new Set(["orchestration:read", "orchestration:operate"]),
  authority: OWNER_AUTHORITY,
};

/** A task's trigger in a few words. */
function triggerText(task: ScheduledTaskView): string {
  const schedule = task.schedule;
  switch (schedule.type) {
    case "interval":
      return `every ${schedule.everyMs} ms`;
    case "fixed_time":
      return "cron" in schedule ? `cron ${schedule.cron}` : `once at ${schedule.at}`;
    case "webhook":
      return `webhook ${task.webhookPath}${schedule.signature === "set" ? " (signed)" : " (unsigned)"}`;
  }
}

function statusText(task: ScheduledTaskView): string {
  if (task.enabled) return style("enabled", "green");
  return task.pausedReason === "requested" || task.pausedReason === null
    ? style("paused", "yellow")
    : style(`paused: ${task.pausedReason}`, "red");
}

function lastRunText(task: ScheduledTaskView): string {
  const last = task.recentTriggers[0];
  if (last === undefined) return "";
  const what = last.outcome === "started" ? (last.runStatus ?? "started") : `${last.outcome} (${last.reason})`;
  return `${what} ${last.createdAt}`;
}

export function registerSchedules(program: Command): void {
  const schedules = program
    .command("schedules")
    .description("Scheduled tasks (schedule_task): what runs when, and what the last trigger did");
  schedules
    .command("list")
    .description(
      "List scheduled tasks, newest first, with their trigger, status (and why one is paused), next run and last trigger (webhook secrets are never shown)",
    )
    .option("--project <id-or-path>", "only this project's tasks")
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(async (options: { project?: string; home?: string; json?: boolean }) => {
      await withHost(options, async (host) => {
        const projectId = options.project !== undefined ? await projectIdOf(host, options.project) : undefined;
        const service = host.container.resolve(ScheduledTaskService);
        const tasks: ScheduledTaskView[] = [];
        for (let offset = 0; ;) {
          const page = await service.list(TERMINAL_OWNER, { projectId, limit: 100, offset });
          tasks.push(...page.tasks);
          if (!page.hasMore) break;
          offset += page.tasks.length;
        }
        if (options.json) printJson(tasks);
        else if (tasks.length === 0)
          process.stdout.write("No scheduled tasks yet. Agents create them with the schedule_task tool.\n");
        else
          printTable(
            ["ID", "TITLE", "TRIGGER", "STATUS", "NEXT RUN", "RUNS IN", "LAST TRIGGER"],
            tasks.map((task) => [
              task.scheduledTaskId,
              task.title,
              triggerText(task),
              statusText(task),
              task.nextRunAt ?? "",
              task.boundThreadId ??
                `new thread (${task.profile !== null ? `profile ${task.profile}` : task.providerInstanceId})`,
              lastRunText(task),
            ]),
          );
      });
    });
  for (const [verb, enabled] of [
    ["resume", true],
    ["pause", false],
  ] as const) {
    schedules
      .command(`${verb} <id>`)
      .description(
        enabled
          ? "Resume a paused scheduled task (also one Switchyard paused because its credential was revoked or expired): it then runs under the home's owner, counting its occurrences from now"
          : "Pause a scheduled task: no trigger fires, webhook requests are recorded as skipped",
      )
      .option("--home <dir>", "Switchyard home")
      .option("--json", "print JSON")
      .action(async (id: string, options: { home?: string; json?: boolean }) => {
        await withHost(options, async (host) => {
          const service = host.container.resolve(ScheduledTaskService);
          let task: ScheduledTaskView;
          try {
            task = await service.schedule(TERMINAL_OWNER, { scheduledTaskId: id, enabled }, { creationSource: "cli" });
          } catch (error) {
            if ((error as { code?: string }).code === "task_not_found")
              throw new CliError(
                `No scheduled task has id ${id}. Run \`switchyard schedules list\` to see them.`,
                EXIT.notFound,
              );
            throw error;
          }
          if (options.json) printJson(task);
          else
            process.stdout.write(
              enabled
                ? `Resumed ${id}; it runs under the home's owner${task.nextRunAt !== null ? `, next at ${task.nextRunAt}` : ""}.\n`
                : `Paused ${id}.\n`,
            );
        });
      });
  }
}
