import { ListProfilesInput, ListProfilesOutput } from "../../../../contract/list-profiles.js";
import { defineRoute } from "../api-route.js";

export const listProfilesRoute = defineRoute({
  method: "GET",
  path: "/profiles",
  operationId: "listProfiles",
  summary: "The profiles a caller may start work with, and which providers can carry each",
  description:
    "orchestrator_capabilities' profiles for a project (projectId, default the caller's): name, description, source, target and ceilings, and for each provider instance the profile could run on whether it can carry the profile's tool rules and harness settings (canCarry false: work sent there with it is refused, capability names what it lacks). refusal: every use is refused (a project file sets what only config.json may). Pass name as profile to POST /threads.",
  tag: "providers",
  requires: "orchestration:read",
  query: ListProfilesInput,
  input: ListProfilesInput,
  output: ListProfilesOutput,
  outputName: "ProfileList",
  handle: async (input, { caller, services }) => ({
    profiles: await services.capabilities.profilesFor(caller, input.projectId),
  }),
});
