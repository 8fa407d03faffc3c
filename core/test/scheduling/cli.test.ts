import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { mustCall } from "../support/mcp-client.js";
import { McpLab } from "../support/mcp-lab.js";
import { httpRequest } from "../support/http-request.js";

describe("switchyard schedules list", () => {
  let lab: McpLab;
  beforeAll(async () => {
    lab = await McpLab.start();
  });
  afterAll(async () => lab.stop());

  it("lists the tasks beside a running server, with trigger, status, next run and last trigger, and never a secret", async () => {
    const empty = await runCli(["schedules", "list", "--home", lab.t.home]);
    expect(empty.code, empty.stderr).toBe(0);
    expect(empty.stdout).toContain("No scheduled tasks yet");

    const client = await lab.client();
    const secret = "a secret the terminal must never print";
    const hook = await mustCall<{ scheduledTaskId: string; webhookUrl: string }>(client, "schedule_task", {
      projectId: lab.projectId,
      target: { providerInstanceId: "alpha" },
      title: "Deploy hook",
      prompt: "@@reply deployed @@wait 0",
      schedule: { type: "webhook", signature: { secret } },
    });
    const nightly = await mustCall<{ scheduledTaskId: string }>(client, "schedule_task", {
      projectId: lab.projectId,
      target: { providerInstanceId: "beta" },
      title: "Nightly report",
      prompt: "@@reply report",
      schedule: { type: "fixed_time", cron: "0 3 * * *" },
      enabled: false,
    });
    expect((await httpRequest(hook.webhookUrl, { body: "unsigned" })).status).toBe(401);

    const table = await runCli(["schedules", "list", "--home", lab.t.home]);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^ID\s+TITLE\s+TRIGGER\s+STATUS\s+NEXT RUN\s+RUNS IN\s+LAST TRIGGER$/);
    const nightlyLine = lines.find((line) => line.startsWith(nightly.scheduledTaskId))!;
    expect(nightlyLine).toMatch(/Nightly report\s+cron 0 3 \* \* \*\s+paused\s+new thread \(beta\)/);
    const hookLine = lines.find((line) => line.startsWith(hook.scheduledTaskId))!;
    expect(hookLine).toContain(`webhook /hooks/${hook.scheduledTaskId} (signed)`);
    expect(hookLine).toContain("enabled");

    const json = await runCli(["schedules", "list", "--home", lab.t.home, "--project", lab.t.workspace, "--json"]);
    expect(json.code, json.stderr).toBe(0);
    const listed = JSON.parse(json.stdout) as {
      scheduledTaskId: string;
      webhookSignature: string | null;
      enabled: boolean;
    }[];
    expect(listed.map((task) => task.scheduledTaskId)).toEqual([nightly.scheduledTaskId, hook.scheduledTaskId]);
    expect(listed[1]).toMatchObject({ webhookSignature: "set", enabled: true });
    for (const output of [table.stdout, json.stdout]) expect(output).not.toContain(secret);

    const missing = await runCli(["schedules", "list", "--home", lab.t.home, "--project", "/no/such/folder"]);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain("switchyard project list");
  });
});
