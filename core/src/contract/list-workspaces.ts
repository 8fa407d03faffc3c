import { z } from "zod";
import { WorkspaceViewSchema } from "./workspace.js";

/** listWorkspaces (HTTP API): a project's thread workspaces, newest first. */
export const ListWorkspacesInput = z
  .object({
    projectId: z.string().min(1).describe("The project whose workspaces to list."),
    all: z.enum(["true", "false"]).optional().describe("true: removed ones too."),
  })
  .strict();

export const ListWorkspacesOutput = z.object({
  workspaces: z.array(
    WorkspaceViewSchema.extend({
      threadId: z.string(),
      projectId: z.string(),
      threadTitle: z.string().nullable(),
      settledAt: z.string().nullable(),
      removableAt: z.string().nullable(),
    }),
  ),
});
