import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import type { SwitchyardConfig } from "../../config/config-schema.js";
import type { SwitchyardPaths } from "../../config/paths.js";
import { readOfflineDatabase } from "../../store/offline-database.js";
import type { WorkspaceRecord } from "../../store/records.js";
import type { DoctorFinding } from "./doctor-report.js";

/**
 * The worktrees and scratch folders threads work in: how many, where, and what looks wrong (a
 * recorded one whose folder is gone, a folder in the workspaces folder no thread owns). Reads
 * the database read-only and only lists folders.
 */
export async function checkWorkspaces(paths: SwitchyardPaths, config: SwitchyardConfig): Promise<DoctorFinding> {
  const root =
    config.workspaces.root === undefined ? join(paths.home, "worktrees") : resolve(paths.home, config.workspaces.root);
  let rows: readonly WorkspaceRecord[] = [];
  if (existsSync(paths.databaseFile)) {
    try {
      rows = await readOfflineDatabase(paths.databaseFile, (db) => db.unremovedWorkspaces());
    } catch (error) {
      return {
        area: "workspaces",
        status: "warn",
        subject: "workspaces",
        detail: `could not read them: ${(error as Error).message}`,
        data: { root },
      };
    }
  }
  const known = new Set(rows.map((row) => row.path));
  const orphans: string[] = [];
  if (existsSync(root)) {
    for (const group of readdirSync(root)) {
      const groupPath = join(root, group);
      if (!statSync(groupPath).isDirectory()) continue;
      for (const entry of readdirSync(groupPath))
        if (!known.has(join(groupPath, entry))) orphans.push(join(groupPath, entry));
    }
  }
  const missing = rows.filter((row) => row.status === "ready" && !existsSync(row.path)).map((row) => row.path);
  const listing = rows.map(
    (row) =>
      `${row.path}${row.branch !== null ? ` [${row.branch}]` : ""}${row.disposition !== null ? ` (${row.disposition})` : ""}`,
  );
  const problems = [
    ...(orphans.length > 0
      ? [`${orphans.length} folder(s) belong to no thread: \`switchyard worktrees prune\` removes them`]
      : []),
    ...(missing.length > 0
      ? [`${missing.length} recorded workspace(s) are gone from disk: ${missing.join(", ")}`]
      : []),
  ];
  const detail = [`${rows.length} in ${root}${problems.length > 0 ? `; ${problems.join("; ")}` : ""}`, ...listing].join(
    "\n",
  );
  return {
    area: "workspaces",
    status: problems.length > 0 ? "warn" : rows.length > 0 ? "ok" : "info",
    subject: "workspaces",
    detail,
    data: { root, workspaces: rows, orphans, missing },
  };
}
