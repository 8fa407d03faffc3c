import { realpathSync, statSync } from "node:fs";
import { basename, isAbsolute, resolve } from "node:path";
import { inject, injectable } from "tsyringe";
import { SwitchyardError } from "../spec/index.js";
import { OrchestratorFailure } from "../engine/orchestrator-failure.js";
import { type Engine, EngineToken } from "../engine/ports.js";
import { createProject } from "../engine/thread-records.js";
import type { ProjectRecord } from "../store/records.js";
import { createHash } from "node:crypto";
import type { Caller } from "./caller.js";
import { CallerContext } from "./caller-context.js";

/** Projects: the folders threads work in. */
@injectable()
export class ProjectService {
  constructor(
    @inject(EngineToken) private readonly engine: Engine,
    private readonly callers: CallerContext,
  ) {}

  /**
   * Adds a project for a caller of the API (the web UI's "Add a project"). Only a person's
   * client whose token may use every project may: a token limited to some projects must not
   * widen what work can reach, and an agent or a linked environment adds no folder of this
   * machine. The path must be absolute (a relative one would be relative to wherever the server
   * was started). Adding a folder again returns its project (`existed`).
   */
  async addFor(
    caller: Caller,
    input: { readonly path: string; readonly name?: string | undefined },
  ): Promise<{ project: ProjectRecord; existed: boolean }> {
    if (caller.kind !== "client") {
      throw new OrchestratorFailure(
        "capability_denied",
        `Adding a project is for a person's client (a token or the web UI), not ${caller.kind === "agent" ? "an agent" : "a linked environment"}. Ask the user to add it (switchyard project add <path>).`,
        { callerKind: caller.kind, reason: "clients_only" },
      );
    }
    const scope = await this.callers.projectScope(caller);
    if (scope !== "*") {
      throw new OrchestratorFailure(
        "capability_denied",
        `This token may use only the projects ${scope.join(", ") || "(none)"}, so it cannot add one. Add it with switchyard project add <path>, or sign in with a token for every project (switchyard ui, or switchyard token issue --projects '*').`,
        { allowedProjects: [...scope], reason: "scoped_caller" },
      );
    }
    if (!isAbsolute(input.path)) {
      throw new OrchestratorFailure(
        "invalid_request",
        `${JSON.stringify(input.path)} is not an absolute path: give the folder's full path on the server's machine (like /home/you/code/app).`,
        { field: "path", path: input.path },
      );
    }
    const existed = (await this.find(input.path)) !== null;
    try {
      return { project: await this.add(input.path, input.name), existed };
    } catch (error) {
      // The folder or name the service refuses is the caller's input: a typed, named refusal.
      if ((error as { code?: unknown }).code === "invalid_input") {
        throw new OrchestratorFailure("invalid_request", (error as Error).message, {
          field: input.name !== undefined && input.name.trim() === "" ? "name" : "path",
          ...(error as SwitchyardError).details,
        });
      }
      throw error;
    }
  }

  /**
   * Adds a project for an existing folder. Adding the same folder again returns the same
   * project, renamed when another `name` is given (so the command converges on what was asked).
   */
  async add(path: string, name?: string): Promise<ProjectRecord> {
    if (name !== undefined && name.trim() === "") {
      throw new SwitchyardError(
        "invalid_input",
        "A project name cannot be empty. Give a name, or none to use the folder's name.",
        { name },
      );
    }
    const root = this.existingFolder(path);
    const existing = await this.byRoot(root);
    if (existing !== null)
      return name === undefined || name === existing.name ? existing : await this.rename(existing, name);
    const id = `project_${createHash("sha256").update(root).digest("hex").slice(0, 16)}`;
    // The first add of a folder has a deterministic id, so concurrent adds land on one project;
    // adding it back after `remove` is new work and must not replay that first receipt.
    const firstAdd = `cmd:project.add:${id}`;
    const commandId =
      (await this.engine.reader.receipt(firstAdd)) === null ? firstAdd : `${firstAdd}:${this.engine.ids.random("req")}`;
    return (
      await this.engine.execute({
        commandId,
        operation: "project.add",
        request: { root },
        handle: async (ctx) => await createProject(ctx, { id, name: name ?? basename(root), rootPath: root }),
      })
    ).result;
  }

  /** Every project, oldest first. */
  async list(): Promise<ProjectRecord[]> {
    return await this.engine.reader.select("project", "1 = 1", [], "ORDER BY created_at, id");
  }

  /** One project, or null. */
  async get(projectId: string): Promise<ProjectRecord | null> {
    return await this.engine.reader.get("project", projectId);
  }

  /** A project by id or by its folder's path, or null. */
  async find(idOrPath: string): Promise<ProjectRecord | null> {
    const byId = await this.get(idOrPath);
    if (byId !== null) return byId;
    let root: string;
    try {
      root = realpathSync(resolve(idOrPath));
    } catch {
      root = resolve(idOrPath);
    }
    return this.byRoot(root);
  }

  /**
   * Removes a project no thread uses. Threads keep their project for as long as they exist (their
   * history and worktrees refer to it), so a project with threads is refused.
   */
  async remove(idOrPath: string): Promise<ProjectRecord> {
    const project = await this.find(idOrPath);
    if (project === null) {
      throw new SwitchyardError(
        "not_found",
        `No project has the id or folder ${idOrPath}. Run \`switchyard project list\` to see them.`,
        { project: idOrPath },
      );
    }
    if (project.scratch)
      throw new SwitchyardError(
        "invalid_input",
        `${project.name} (${project.id}) is the Scratch project Switchyard keeps for threads launched without a project; it cannot be removed.`,
        { projectId: project.id },
      );
    await this.engine.execute({
      commandId: `cmd:project.remove:${project.id}:${this.engine.ids.random("req")}`,
      operation: "project.remove",
      request: { projectId: project.id },
      handle: async (ctx) => {
        // Checked inside the transaction, so no thread can be created in it meanwhile.
        const threads = await ctx.count("thread", "project_id = ?", [project.id]);
        if (threads > 0) {
          throw new SwitchyardError(
            "conflict",
            `Project ${project.name} (${project.id}) has ${threads} thread${threads === 1 ? "" : "s"}, so it cannot be removed: their history refers to it. Nothing was changed.`,
            { projectId: project.id, threads },
          );
        }
        ctx.put("project", { ...(await ctx.require("project", project.id)), updatedAt: ctx.now, removedAt: ctx.now });
        return { projectId: project.id };
      },
    });
    return project;
  }

  private async rename(project: ProjectRecord, name: string): Promise<ProjectRecord> {
    return (
      await this.engine.execute({
        commandId: `cmd:project.rename:${project.id}:${this.engine.ids.random("req")}`,
        operation: "project.rename",
        request: { projectId: project.id, name },
        handle: async (ctx) =>
          await ctx.update("project", project.id, (current) => ({ ...current, name, updatedAt: ctx.now })),
      })
    ).result;
  }

  private async byRoot(root: string): Promise<ProjectRecord | null> {
    return (await this.engine.reader.select("project", "root_path = ?", [root]))[0] ?? null;
  }

  private existingFolder(path: string): string {
    const absolute = resolve(path);
    try {
      if (!statSync(absolute).isDirectory()) throw new Error("not a directory");
      return realpathSync(absolute);
    } catch {
      throw new SwitchyardError(
        "invalid_input",
        `${absolute} is not an existing folder. Create it first, or pass the path of a folder.`,
        { path: absolute },
      );
    }
  }
}
