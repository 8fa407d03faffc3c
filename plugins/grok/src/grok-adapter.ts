import { z } from "zod";
import type { UserInputQuestion } from "@switchyard/sdk";
import { createAcpDriver, type AcpAdapterOptions, type AcpExtensionInput, type AcpFlavor } from "@switchyard/sdk/acp";
import { GROK_CAPABILITIES, refineGrokCapabilities } from "./grok-capabilities.js";
import {
  XAI_METHODS,
  parseAskUserQuestionParams,
  parseExitPlanModeParams,
  type XaiAskUserQuestionResult,
  type XaiExitPlanModeResult,
} from "./grok-wire.js";

/** Validates Grok driver options. */
export const grokOptionsSchema = z
  .object({
    /** The Grok CLI. */
    command: z.string().min(1).default("grok"),
    /** Its arguments for ACP over stdio. */
    args: z.array(z.string()).default(["agent", "stdio"]),
    /** The `authenticate` method to use when Grok lists auth methods; default: its cached login. */
    authMethodId: z.string().min(1).optional(),
  })
  .strict();

/** Driver options for a Grok instance. */
export type GrokOptions = z.output<typeof grokOptionsSchema>;

/** What the model is told when it proposed a plan in a plan-only turn. */
export const PLAN_RECORDED_FEEDBACK =
  "Switchyard recorded this plan for review. Do not implement it now; end your turn and wait for the next message.";

/** `_x.ai/ask_user_question` → a blocking `user_input` runtime request. Never auto-answered. */
async function askUserQuestion({ params: raw, session, signal }: AcpExtensionInput): Promise<XaiAskUserQuestionResult> {
  const params = parseAskUserQuestionParams(raw);
  const turn = session?.activeTurn;
  if (!session || !turn) return { outcome: "cancelled" };
  const questions: UserInputQuestion[] = params.questions.map((question, index) => ({
    id: `q${index + 1}`,
    ...(question.header !== undefined ? { header: question.header } : {}),
    question: question.question,
    ...(question.options.length > 0 ? { options: question.options } : {}),
    ...(question.multiSelect ? { multiSelect: true } : {}),
  }));
  const outcome = await session.openRuntimeRequest(turn.turnId, { kind: "user_input", questions, blocking: true }, { signal });
  if (outcome.kind === "cancelled") return { outcome: "cancelled" };
  const response = outcome.response;
  if (response.kind !== "user_input") {
    return response.kind === "approval" && response.decision === "decline" ? { outcome: "declined" } : { outcome: "cancelled" };
  }
  const answers: Record<string, string> = {};
  params.questions.forEach((question, index) => {
    const answer = response.answers[`q${index + 1}`];
    if (answer === undefined) return;
    answers[question.question] = typeof answer === "string" ? answer : answer.join(", ");
  });
  return { outcome: "answered", answers };
}

/**
 * `_x.ai/exit_plan_mode` → `plan.proposed`. In a plan-only turn the plan is recorded and Grok
 * is told to stop (it stays in plan mode); in a default turn Grok entered plan mode on its own,
 * so the plan is approved and Grok goes on to implement it instead of stalling in plan mode.
 */
async function exitPlanMode({ params: raw, session }: AcpExtensionInput): Promise<XaiExitPlanModeResult> {
  const params = parseExitPlanModeParams(raw);
  const turn = session?.activeTurn;
  if (!session || !turn) return { outcome: "cancelled" };
  if (params.planContent.trim().length > 0) {
    session.emit({ type: "plan.proposed", turnId: turn.turnId, itemId: session.newItemId(turn.turnId, "plan"), text: params.planContent });
  }
  return turn.interactionMode === "plan" ? { outcome: "rejected", feedback: PLAN_RECORDED_FEEDBACK } : { outcome: "approved" };
}

/** The Grok flavor of the shared ACP adapter. */
export const grokFlavor: AcpFlavor<GrokOptions> = {
  driverKind: "grok",
  displayName: "Grok",
  optionsSchema: grokOptionsSchema,
  capabilities: GROK_CAPABILITIES,
  resolveLaunch: ({ instance, options }) => ({
    command: options.command,
    args: options.args,
    // GROK_HOME scopes the CLI's config, sessions and login to the instance.
    ...(instance.homePath !== null ? { env: { GROK_HOME: instance.homePath } } : {}),
  }),
  authMethodId: ({ options }) => options.authMethodId,
  mcpTransport: "auto",
  hardInterrupt: "respawn",
  extensions: {
    requests: Object.fromEntries([
      ...XAI_METHODS.askUserQuestion.map((method) => [method, askUserQuestion] as const),
      ...XAI_METHODS.exitPlanMode.map((method) => [method, exitPlanMode] as const),
    ]),
  },
  hooks: { refineCapabilities: (negotiated) => refineGrokCapabilities(negotiated) },
};

/** The Grok driver; `adapterOptions.channelFactory` replaces the process spawn (tests). */
export function createGrokDriver(adapterOptions: AcpAdapterOptions = {}) {
  return createAcpDriver(grokFlavor, adapterOptions);
}
