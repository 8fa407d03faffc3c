import { z } from "zod";
import { INTERACTION_MODES, RUNTIME_MODES } from "../../spec/index.js";
import { TreeBudgetSchema } from "../tree-budget-schema.js";

/**
 * A profile's name: lowercase words joined by `-`, `_` or `.`, optionally nested with `/`
 * (OpenCode names `.opencode/agents/team/reviewer.md` `team/reviewer`).
 */
export const ProfileName = z
  .string()
  .max(100)
  .regex(
    /^[a-z0-9][a-z0-9._-]*(?:\/[a-z0-9][a-z0-9._-]*)*$/,
    "must be lowercase letters, digits, '.', '_' or '-' (segments joined by '/'), starting with a letter or digit",
  );

/** Which provider and model a profile's work runs on; each field omitted inherits as in delegate_task. */
export const ProfileTargetSchema = z
  .object({
    providerInstanceId: z.string().min(1).optional(),
    driverKind: z.string().min(1).optional(),
    model: z.string().min(1).optional(),
    effort: z.string().min(1).max(64).optional(),
  })
  .strict();

/**
 * Tool rules by the harness's own tool names (`Bash`, `Bash(git push:*)`, `edit`), enforced by
 * the child's provider where it declares `tools.rules`; the shared policy refuses otherwise.
 */
export const ProfileToolRulesSchema = z
  .object({
    allow: z.array(z.string().min(1)).default([]),
    deny: z.array(z.string().min(1)).default([]),
    ask: z.array(z.string().min(1)).default([]),
    /** True: a tool that matches no allow or ask rule is denied (Claude Code's agent `tools` list). */
    allowOnly: z.boolean().default(false),
  })
  .strict();

/** An MCP server a profile adds to its harness: streamable HTTP or a stdio command. */
export const ProfileMcpServerSchema = z.discriminatedUnion("type", [
  z
    .object({
      type: z.literal("http"),
      url: z.string().url(),
      headers: z.record(z.string().min(1), z.string()).optional(),
    })
    .strict(),
  z
    .object({
      type: z.literal("stdio"),
      command: z.string().min(1),
      args: z.array(z.string()).optional(),
      env: z.record(z.string().min(1), z.string()).optional(),
    })
    .strict(),
]);

/**
 * One profile: a named, reusable kit an agent (or a person) delegates to. The same shape from
 * every source: the user's config (`profiles`), a project's `.switchyard/agents/*.md` front
 * matter (the body is `instructions`), and the converted Claude Code and OpenCode agents.
 */
export const ProfileSchema = z
  .object({
    name: ProfileName,
    /** Shown to the delegating agent (orchestrator_capabilities), so it can pick the profile. */
    description: z.string().min(1).max(2_000),
    /** The child's instructions, given with its first turn (beside a role's, when one is asked for). */
    instructions: z.string().min(1).max(100_000).optional(),
    target: ProfileTargetSchema.optional(),
    /** The broadest runtime mode the profile's work runs in (also its default); a caller may narrow it. */
    maxRuntimeMode: z.enum(RUNTIME_MODES).optional(),
    /** The broadest interaction mode (also its default); `plan` keeps the work to planning. */
    maxInteractionMode: z.enum(INTERACTION_MODES).optional(),
    /** Where the work runs when the call names no workspace. */
    workspace: z.enum(["shared", "worktree", "scratch"]).optional(),
    tools: ProfileToolRulesSchema.optional(),
    /** Extra environment for the harness; honoured only from the user's config (docs/profiles.md, the trust rule). */
    environment: z.record(z.string().min(1), z.string()).optional(),
    /** The harness's home folder (CODEX_HOME, CLAUDE_CONFIG_DIR, ...); honoured only from the user's config. */
    harnessHome: z.string().min(1).optional(),
    /** Extra MCP servers for the harness, by name; honoured only from the user's config. */
    mcpServers: z
      .record(z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "letters, digits, '_' or '-'"), ProfileMcpServerSchema)
      .optional(),
    /** Default limits of the task's tree; a call's budget may only be tighter. */
    budget: TreeBudgetSchema.optional(),
  })
  .strict();

export type Profile = z.infer<typeof ProfileSchema>;
export type ProfileTarget = z.infer<typeof ProfileTargetSchema>;
export type ProfileToolRules = z.infer<typeof ProfileToolRulesSchema>;
