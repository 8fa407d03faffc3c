/**
 * What this agent speaks beyond stable ACP. The shared adapter (`@switchyard/sdk/acp`) speaks
 * ACP itself; a flavor only adds the agent's own `_`-prefixed extension methods, typed and
 * validated here (generated from the agent's schema where it publishes one). This one is a
 * structured question: the agent blocks a tool call until the user answers.
 */
import { z } from "zod";

/** Extension methods the agent calls on the client. ACP reserves the `_` prefix for them. */
export const TEMPLATE_EXTENSION_METHODS = {
  askUserQuestion: "_template/ask_user_question",
} as const;

/** `_template/ask_user_question` params, validated (a bad shape is a JSON-RPC invalid-params error). */
export const askUserQuestionParamsSchema = z.object({
  sessionId: z.string().min(1),
  /** The tool call that waits for the answer. */
  toolCallId: z.string().optional(),
  questions: z
    .array(
      z.object({
        /** The question; its answer is keyed by it. */
        question: z.string().min(1),
        header: z.string().optional(),
        options: z.array(z.object({ label: z.string(), description: z.string().optional() })).default([]),
        multiSelect: z.boolean().default(false),
      }),
    )
    .min(1),
});

/** `_template/ask_user_question` params. */
export type AskUserQuestionParams = z.output<typeof askUserQuestionParamsSchema>;

/** `_template/ask_user_question` result: answers keyed by question text (several choices joined by ", "). */
export type AskUserQuestionResult =
  | { readonly outcome: "answered"; readonly answers: Readonly<Record<string, string>> }
  | { readonly outcome: "cancelled" };
