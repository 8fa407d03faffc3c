import { realpathSync, statSync } from "node:fs";
import { basename, resolve } from "node:path";
import { inject, injectable } from "tsyringe";
import { SwitchyardError } from "../spec/index.js";
import { TOKENS } from "../di/tokens.js";
import type { Engine } from "../engine/engine.js";
import { createProject } from "../engine/thread-records.js";
import type { ProjectRecord } from "../store/records.js";
import { createHash } from "node:crypto";

/** Projects: the folders threads work in. */
@injectable()
export class ProjectService {
  constructor(@inject(TOKENS.Engine) private readonly engine: Engine) {}

  /** Adds a project for an existing folder; adding the same folder again returns the same project. */
  add(path: string, name?: string): ProjectRecord {
    const absolute = resolve(path);
    let root: string;
    try {
      if (!statSync(absolute).isDirectory()) throw new Error("not a directory");
      root = realpathSync(absolute);
    } catch {
      throw new SwitchyardError("invalid_input", `${absolute} is not an existing folder. Create it first, or pass the path of a folder.`, { path: absolute });
    }
    const existing = this.engine.store.select("project", "root_path = ?", [root])[0];
    if (existing !== undefined) return existing;
    const id = `project_${createHash("sha256").update(root).digest("hex").slice(0, 16)}`;
    return this.engine.execute({
      commandId: `cmd:project.add:${id}`,
      operation: "project.add",
      request: { root },
      handle: (ctx) => createProject(ctx, { id, name: name ?? basename(root), rootPath: root }),
    }).result;
  }

  /** Every project, oldest first. */
  list(): ProjectRecord[] {
    return this.engine.store.select("project", "1 = 1", [], "ORDER BY created_at, id");
  }

  /** One project, or null. */
  get(projectId: string): ProjectRecord | null {
    return this.engine.store.get("project", projectId);
  }
}
