import type { DelegatedTaskRole } from "../../store/records.js";

/**
 * The role instruction a delegated child gets with its task (and nothing else from the parent):
 * short, so the task prompt stays the substance.
 */
export const ROLE_INSTRUCTIONS: Record<DelegatedTaskRole, string | null> = {
  implementation:
    "Your role: implementation. Make the change the task asks for, keep it minimal, check it works, and end with a short report of what you changed and how you verified it.",
  research:
    "Your role: research. Investigate and answer the question with evidence (files, commands, sources). Do not change files. End with a concise answer first, then the supporting details.",
  review:
    "Your role: review. Examine the work critically and report concrete findings, most severe first, each with where it is and why it matters. Do not change files unless the task says so.",
  design:
    "Your role: design. Propose a design with its trade-offs and a recommended option. Do not implement it unless the task says so.",
  test: "Your role: test. Write or run tests for what the task names, report what passes and fails, and include failing output verbatim.",
  general: null,
};
