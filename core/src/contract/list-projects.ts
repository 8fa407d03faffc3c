import { z } from "zod";
import type { ProjectService } from "../services/project-service.js";
import { OrchestratorCapabilitiesOutput } from "./orchestrator-capabilities.js";

/** A project as orchestrator_capabilities lists it, with its folder. */
export const ProjectView = OrchestratorCapabilitiesOutput.shape.projects.element.extend({
  rootPath: z.string().describe("The project's folder."),
  scratch: z.boolean().describe("The Scratch project, where threads launched without a project work."),
});

/** listProjects (HTTP API): the projects the caller may use. */
export const ListProjectsInput = z.object({}).strict();

/** A project as listProjects lists it: with how many threads it holds. */
export const ListedProject = ProjectView.extend({
  threadCount: z
    .number()
    .int()
    .describe(
      "How many threads the project holds, sub-agents' included (listThreads' total with includeSubagents): a client can ask for every page at once.",
    ),
});

export const ListProjectsOutput = z.object({ projects: z.array(ListedProject) });

export function projectView(project: Awaited<ReturnType<ProjectService["list"]>>[number]): z.input<typeof ProjectView> {
  return { projectId: project.id, name: project.name, rootPath: project.rootPath, scratch: project.scratch };
}
