import { AddProjectInput, AddProjectOutput } from "../../../../contract/add-project.js";
import { ListProjectsInput, ListProjectsOutput, projectView } from "../../../../contract/list-projects.js";
import { defineRoute } from "../api-route.js";

export const listProjectsRoute = defineRoute({
  method: "GET",
  path: "/projects",
  operationId: "listProjects",
  summary: "List the projects this token may use",
  tag: "projects",
  requires: "orchestration:read",
  input: ListProjectsInput,
  output: ListProjectsOutput,
  outputName: "ProjectList",
  handle: async (_input, { caller, services }) => {
    const projects = [];
    // One count after another, in the listing's order.
    for (const project of await services.projects.list())
      if (await services.callers.mayUseProject(caller, project.id))
        projects.push({ ...projectView(project), threadCount: await services.queries.threadCount(project.id) });
    return { projects };
  },
});

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
  output: AddProjectOutput,
  outputName: "AddedProject",
  status: 201,
  handle: async (input, { caller, services }) => {
    const { project, existed } = await services.projects.addFor(caller, input);
    return { project: projectView(project), existed };
  },
});
