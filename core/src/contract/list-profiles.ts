import { z } from "zod";
import { OrchestratorCapabilitiesOutput } from "./orchestrator-capabilities.js";

/** listProfiles (HTTP API): orchestrator_capabilities' profiles, for the project the work would go to. */
export const ListProfilesInput = z
  .object({
    projectId: z
      .string()
      .min(1)
      .optional()
      .describe(
        "The project whose .switchyard/agents, .claude/agents and OpenCode agents count (default the caller's).",
      ),
  })
  .strict();

export const ListProfilesOutput = z.object({
  profiles: OrchestratorCapabilitiesOutput.shape.profiles.unwrap(),
});
