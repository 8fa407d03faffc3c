import { z } from "zod";
import { OrchestratorCapabilitiesOutput } from "../../../../contract/orchestrator-capabilities.js";
import { defineRoute } from "../api-route.js";

/** A project as orchestrator_capabilities lists it, with its folder. */
export const ProjectView = OrchestratorCapabilitiesOutput.shape.projects.element.extend({
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

export const AddProjectInput = z
  .object({
    path: z.string().min(1).max(4_096).describe("The folder's absolute path on the server's machine. It must exist."),
    name: z.string().trim().min(1).max(200).optional().describe("Its name (default: the folder's name). Adding the folder again with another name renames the project."),
  })
  .strict();

export const addProjectRoute = defineRoute({
  method: "POST",
  path: "/projects",
  operationId: "addProject",
  summary: "Add a folder as a project",
  description:
    "Like switchyard project add: the folder must exist and the path be absolute. Adding a folder that is a project already returns it (existed: true), renamed when name differs. Only a client whose token may use every project may add one (a token limited to some projects, an agent or a linked environment answers capability_denied, details.reason).",
  tag: "projects",
  requires: "orchestration:operate",
  body: AddProjectInput,
  input: AddProjectInput,
  output: z.object({ project: ProjectView, existed: z.boolean().describe("The folder was a project already.") }),
  outputName: "AddedProject",
  status: 201,
  handle: (input, { caller, services }) => {
    const { project, existed } = services.projects.addFor(caller, input);
    return { project: { projectId: project.id, name: project.name, rootPath: project.rootPath, scratch: project.scratch }, existed };
  },
});
