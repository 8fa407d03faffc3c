import { z } from "zod";
import { callerFromScope } from "../caller-from-scope.js";
import { ClientRequestId, MetadataResult } from "../contract.js";
import { CHANGES_STATE, defineTool } from "../tool-definition.js";

export const linkPullRequestTool = defineTool({
  name: "link_pull_request",
  title: "Link a pull request",
  description: "Links a pull request URL to a thread (yours when threadId is omitted). Thread list and read results show it.",
  input: z.object({ threadId: z.string().min(1).optional(), url: z.string().url(), clientRequestId: ClientRequestId.optional() }).strict(),
  output: MetadataResult,
  annotations: CHANGES_STATE,
  requires: "orchestration:operate",
  handle: async (input, { scope, services }) => services.metadata.linkPullRequest(callerFromScope(scope), input),
});

export const unlinkPullRequestTool = defineTool({
  name: "unlink_pull_request",
  title: "Unlink a pull request",
  description: "Removes a thread's linked pull request (yours when threadId is omitted).",
  input: z.object({ threadId: z.string().min(1).optional(), clientRequestId: ClientRequestId.optional() }).strict(),
  output: MetadataResult,
  annotations: CHANGES_STATE,
  requires: "orchestration:operate",
  handle: async (input, { scope, services }) => services.metadata.unlinkPullRequest(callerFromScope(scope), input),
});
