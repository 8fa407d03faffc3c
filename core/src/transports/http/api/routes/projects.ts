import { z } from "zod";
import { orchestratorCapabilitiesTool } from "../../../mcp/tools/orchestrator-capabilities.js";
import { defineRoute } from "../api-route.js";

/** A project as orchestrator_capabilities lists it, with its folder. */
export const ProjectView = orchestratorCapabilitiesTool.output.shape.projects.element.extend({
  rootPath: z.string().describe("The project's folder."),
  scratch: z.boolean().describe("The Scratch project, where threads launched without a project work."),
});

export const listProjectsRoute = defineRoute({
  method: "GET",
  path: "/projects",
  operationId: "listProjects",
  summary: "List the projects this token may use",
  tag: "projects",
  requires: "orchestration:read",
  input: z.object({}).strict(),
  output: z.object({ projects: z.array(ProjectView) }),
  outputName: "ProjectList",
  handle: (_input, { caller, services }) => ({
    projects: services.projects
      .list()
      .filter((project) => services.callers.mayUseProject(caller, project.id))
      .map((project) => ({ projectId: project.id, name: project.name, rootPath: project.rootPath, scratch: project.scratch })),
  }),
});
