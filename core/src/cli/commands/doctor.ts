import type { Command } from "commander";
import { loadConfig } from "../../config/config-loader.js";
import { pathsFor, resolveHome } from "../../config/paths.js";
import { doctorReport, type DoctorFinding, type DoctorReport, type FindingStatus } from "../doctor/doctor-report.js";
import {
  checkConfig,
  checkDatabase,
  checkHome,
  checkHomeAccess,
  checkInstall,
  checkLock,
  checkNode,
  checkPort,
} from "../doctor/host-checks.js";
import { pluginFindings, providerFindings } from "../doctor/provider-checks.js";
import { checkWorkspaces } from "../doctor/workspace-checks.js";
import { withProviders } from "../open-host.js";
import { EXIT, printJson, style, type StyleName } from "../output.js";

/**
 * Everything doctor looks at, in order. A broken config stops what needs it (plugins listed in
 * it, instances, the port); nothing here takes the home's lock, creates a file in the home,
 * starts a harness session or writes into a harness's home.
 */
export async function runDoctor(options: { readonly home?: string }): Promise<DoctorReport> {
  const findings: DoctorFinding[] = [checkNode(), checkInstall()];
  let paths;
  try {
    paths = pathsFor(resolveHome(options.home));
  } catch (error) {
    findings.push({ area: "home", status: "fail", subject: "home", detail: (error as Error).message });
    return doctorReport(findings);
  }
  findings.push(checkHome(paths));
  const access = checkHomeAccess(paths);
  if (access !== null) findings.push(access);
  const { finding: configFinding, config } = checkConfig(paths, () => loadConfig(paths.configFile));
  findings.push(configFinding);
  const { finding: lockFinding, lock } = checkLock(paths);
  findings.push(lockFinding, await checkDatabase(paths));
  if (config === null) return doctorReport(findings);
  try {
    await withProviders(options, async (providers, _paths, plugins) => {
      findings.push(...pluginFindings(plugins));
      if (config.providers.length === 0) {
        findings.push({
          area: "provider",
          status: "info",
          subject: "providers",
          detail: `none configured: add them to ${paths.configFile} ("providers": [...])`,
        });
      }
      findings.push(...providerFindings(await providers.probeAll("inspect")));
    });
  } catch (error) {
    // Options a driver's schema refuses: the instance cannot be created.
    findings.push({ area: "config", status: "fail", subject: "provider options", detail: (error as Error).message });
  }
  findings.push(await checkPort(config, lock));
  findings.push(await checkWorkspaces(paths, config));
  return doctorReport(findings);
}

const MARKS: Readonly<Record<FindingStatus, { readonly text: string; readonly style: StyleName }>> = {
  ok: { text: "ok", style: "green" },
  info: { text: "info", style: "dim" },
  warn: { text: "warn", style: "yellow" },
  fail: { text: "FAIL", style: "red" },
};

function printReport(report: DoctorReport): void {
  const width = Math.max(...report.findings.map((finding) => finding.subject.length));
  for (const finding of report.findings) {
    const mark = MARKS[finding.status];
    const [first, ...rest] = finding.detail.split("\n");
    process.stdout.write(`${style(mark.text.padEnd(4), mark.style)}  ${finding.subject.padEnd(width)}  ${first}\n`);
    for (const line of rest) process.stdout.write(`${" ".repeat(width + 8)}${line}\n`);
  }
  const verdict = report.verdict.ok
    ? style(`switchyard doctor: ${report.verdict.summary}`, "green")
    : style(`switchyard doctor: ${report.verdict.summary}`, "red");
  process.stdout.write(`\n${verdict}\n`);
}

export function registerDoctor(program: Command): void {
  program
    .command("doctor")
    .description(
      "Check this Switchyard: Node, home (and who can read it) and lock, database, plugins, each provider's harness (where, version, login, MCP), the port, thread worktrees",
    )
    .addHelpText(
      "after",
      "\nOnly looks, like `switchyard providers`: it takes no lock, creates nothing in the home, starts no harness session and writes nothing into a harness's home.\nExit code 0 when everything configured can work, 1 when something cannot (each FAIL line says what to do).\n",
    )
    .option("--home <dir>", "Switchyard home")
    .option("--json", "print JSON")
    .action(async (options: { home?: string; json?: boolean }) => {
      const report = await runDoctor(options);
      if (options.json) printJson(report);
      else printReport(report);
      if (!report.verdict.ok) process.exitCode = EXIT.failed;
    });
}
