// Runs every bench/*.bench.js (or only those whose name contains an argument) and prints one
// table. Each bench module exports `default async function run(): Promise<BenchReport>`, where
// a report is { name, rows: [{ metric, value, unit?, baseline?, ratio?, note? }] }. Ratios
// compare Switchyard with a baseline run side by side in the same process or script, so they
// mean something on any machine; absolute numbers are printed for context only.
import { readdir, mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const filters = process.argv.slice(2);
const files = (await readdir(here)).filter((f) => f.endsWith(".bench.js")).sort()
  .filter((f) => filters.length === 0 || filters.some((needle) => f.includes(needle)));

const reports = [];
for (const file of files) {
  const mod = await import(pathToFileURL(join(here, file)).href);
  process.stdout.write(`\n== ${file}\n`);
  try {
    const report = await mod.default();
    reports.push(report);
    for (const row of report.rows) {
      const value = typeof row.value === "number" ? row.value.toFixed(3) : String(row.value);
      const parts = [`  ${row.metric}: ${value}${row.unit ? " " + row.unit : ""}`];
      if (row.baseline !== undefined) parts.push(`baseline ${Number(row.baseline).toFixed(3)}${row.unit ? " " + row.unit : ""}`);
      if (row.ratio !== undefined) parts.push(`ratio ${Number(row.ratio).toFixed(2)}x`);
      if (row.note) parts.push(`(${row.note})`);
      process.stdout.write(parts.join("  ") + "\n");
    }
  } catch (error) {
    process.exitCode = 1;
    process.stdout.write(`  FAILED: ${error instanceof Error ? error.stack : String(error)}\n`);
  }
}
await mkdir(join(here, "results"), { recursive: true });
await writeFile(join(here, "results", `bench-${Date.now()}.json`), JSON.stringify(reports, null, 2));
