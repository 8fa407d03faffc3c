import { LinkPullRequestInput, LinkPullRequestOutput } from "../../../contract/link-pull-request.js";
import { UnlinkPullRequestInput, UnlinkPullRequestOutput } from "../../../contract/unlink-pull-request.js";
import { callerFromScope } from "../../caller-from-scope.js";
import { CHANGES_STATE, defineTool } from "../tool-definition.js";

export const linkPullRequestTool = defineTool({
  name: "link_pull_request",
  title: "Link a pull request",
  description:
    "Links a pull request URL to a thread (yours when threadId is omitted). Thread list and read results show it.",
  input: LinkPullRequestInput,
  output: LinkPullRequestOutput,
  annotations: CHANGES_STATE,
  requires: "orchestration:operate",
  handle: async (input, { scope, services }) => services.metadata.linkPullRequest(callerFromScope(scope), input),
});

export const unlinkPullRequestTool = defineTool({
  name: "unlink_pull_request",
  title: "Unlink a pull request",
  description: "Removes a thread's linked pull request (yours when threadId is omitted).",
  input: UnlinkPullRequestInput,
  output: UnlinkPullRequestOutput,
  annotations: CHANGES_STATE,
  requires: "orchestration:operate",
  handle: async (input, { scope, services }) => services.metadata.unlinkPullRequest(callerFromScope(scope), input),
});
