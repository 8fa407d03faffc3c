import type { Command } from "commander";
import type { Caller } from "../../services/caller.js";
import { ScheduledTaskService } from "../../services/scheduling/scheduled-task-service.js";
import type { ScheduledTaskView } from "../../services/scheduling/scheduled-task-view.js";
import { withHost } from "../open-host.js";
import { printJson, printTable, style } from "../output.js";
import { projectIdOf } from "../thread-arguments.js";

/** The operator at a terminal: a client with read access, outside any thread. */
const TERMINAL_READER: Caller = {
  kind: "client",
  threadId: null,
  projectId: null,
  providerInstanceId: null,
  providerSessionId: null,
  requestScope: "cli:terminal",
  capabilities: new Set(["orchestration:read"]),
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

function lastRunText(task: ScheduledTaskView): string {
  const last = task.recentTriggers[0];
  if (last === undefined) return "";
  const what = last.outcome === "started" ? (last.runStatus ?? "started") : `${last.outcome} (${last.reason})`;
  return `${what} ${last.createdAt}`;
}

export function registerSchedules(program: Command): void {
  const schedules = program.command("schedules").description("Scheduled tasks (schedule_task): what runs when, and what the last trigger did");
  schedules
    .command("list")
    .description("List scheduled tasks, newest first, with their trigger, next run and last trigger (webhook secrets are never shown)")
    .option("--project <id-or-path>", "only this project's tasks")
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(async (options: { project?: string; home?: string; json?: boolean }) => {
      await withHost(options, (host) => {
        const projectId = options.project !== undefined ? projectIdOf(host, options.project) : undefined;
        const service = host.container.resolve(ScheduledTaskService);
        const tasks: ScheduledTaskView[] = [];
        for (let offset = 0; ; ) {
          const page = service.list(TERMINAL_READER, { projectId, limit: 100, offset });
          tasks.push(...page.tasks);
          if (!page.hasMore) break;
          offset += page.tasks.length;
        }
        if (options.json) printJson(tasks);
        else if (tasks.length === 0) process.stdout.write("No scheduled tasks yet. Agents create them with the schedule_task tool.\n");
        else
          printTable(
            ["ID", "TITLE", "TRIGGER", "STATUS", "NEXT RUN", "RUNS IN", "LAST TRIGGER"],
            tasks.map((task) => [
              task.scheduledTaskId,
              task.title,
              triggerText(task),
              task.enabled ? style("enabled", "green") : style("paused", "yellow"),
              task.nextRunAt ?? "",
              task.boundThreadId ?? `new thread (${task.providerInstanceId})`,
              lastRunText(task),
            ]),
          );
      });
    });
}
