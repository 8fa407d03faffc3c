import { z } from "zod";
import { ProjectView } from "./list-projects.js";

/** addProject (HTTP API): a folder added as a project, like switchyard project add. */
export const AddProjectInput = z
  .object({
    path: z.string().min(1).max(4_096).describe("The folder's absolute path on the server's machine. It must exist."),
    name: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .optional()
      .describe(
        "Its name (default: the folder's name). Adding the folder again with another name renames the project.",
      ),
  })
  .strict();

export const AddProjectOutput = z.object({
  project: ProjectView,
  existed: z.boolean().describe("The folder was a project already."),
});
