// Runs every bench/*.bench.js (or only those whose name contains an argument) and prints one
// table. Each bench module exports `default async function run(): Promise<BenchReport>`, where
// a report is { name, rows: [{ metric, value, unit?, baseline?, ratio?, note? }] }. Ratios
// compare Switchyard with a baseline run side by side in the same process or script, so they
// mean something on any machine; absolute numbers are printed for context only. The results
// file (bench/results/bench-<ms>.json) records the machine's load average before and after each
// bench beside its rows, since absolute figures from a loaded machine mean little. See README.md.
import { readdir, mkdir, writeFile } from "node:fs/promises";
import { availableParallelism, loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const filters = process.argv.slice(2);
const files = (await readdir(here))
  .filter((f) => f.endsWith(".bench.js"))
  .sort()
  .filter((f) => filters.length === 0 || filters.some((needle) => f.includes(needle)));

const load = () => loadavg().map((n) => Number(n.toFixed(2)));
process.stdout.write(`node ${process.version}, ${availableParallelism()} cores, load average ${load().join(" ")}\n`);
const reports = [];
for (const file of files) {
  const mod = await import(pathToFileURL(join(here, file)).href);
  process.stdout.write(`\n== ${file}\n`);
  try {
    const loadBefore = load();
    const startedAt = new Date().toISOString();
    const report = { file, startedAt, loadBefore, ...(await mod.default()), loadAfter: load() };
    reports.push(report);
    for (const row of report.rows) {
      const value = typeof row.value === "number" ? row.value.toFixed(3) : String(row.value);
      const parts = [`  ${row.metric}: ${value}${row.unit ? " " + row.unit : ""}`];
      if (row.baseline !== undefined)
        parts.push(`baseline ${Number(row.baseline).toFixed(3)}${row.unit ? " " + row.unit : ""}`);
      if (row.ratio !== undefined) parts.push(`ratio ${Number(row.ratio).toFixed(2)}x`);
      if (row.note) parts.push(`(${row.note})`);
      process.stdout.write(parts.join("  ") + "\n");
    }
    process.stdout.write(`  (load average ${report.loadBefore[0]} before, ${report.loadAfter[0]} after)\n`);
  } catch (error) {
    reports.push({ file, failed: error instanceof Error ? error.message : String(error) });
    process.exitCode = 1;
    process.stdout.write(`  FAILED: ${error instanceof Error ? error.stack : String(error)}\n`);
  }
}
await mkdir(join(here, "results"), { recursive: true });
const resultsFile = join(here, "results", `bench-${Date.now()}.json`);
await writeFile(
  resultsFile,
  JSON.stringify({ node: process.version, cores: availableParallelism(), filters, reports }, null, 2),
);
process.stdout.write(`\nresults: ${resultsFile}\n`);
