import type { UserInputQuestion } from "@switchyard/sdk";
import type { AcpExtensionInput, AcpExtensions } from "@switchyard/sdk/acp";
import {
  XAI_METHODS,
  parseAskUserQuestionParams,
  parseExitPlanModeParams,
  type XaiAskUserQuestionResult,
  type XaiExitPlanModeResult,
} from "./grok-wire.js";

/** What the model is told when it proposed a plan in a plan-only turn. */
export const PLAN_RECORDED_FEEDBACK =
  "Switchyard recorded this plan for review. Do not implement it now; end your turn and wait for the next message.";

/**
 * `_x.ai/ask_user_question` → a blocking `user_input` runtime request (never auto-answered).
 * Anything but answers (a dismissal, the turn's end) is `cancelled`.
 */
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
  const outcome = await session.openRuntimeRequest(
    turn.turnId,
    { kind: "user_input", questions, blocking: true },
    { signal },
  );
  if (outcome.kind === "cancelled" || outcome.response.kind !== "user_input") return { outcome: "cancelled" };
  const answers: Record<string, string> = {};
  const given = outcome.response.answers;
  params.questions.forEach((question, index) => {
    const answer = given[`q${index + 1}`];
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
    session.emit({
      type: "plan.proposed",
      turnId: turn.turnId,
      itemId: session.newItemId(turn.turnId, "plan"),
      text: params.planContent,
    });
  }
  return turn.interactionMode === "plan"
    ? { outcome: "rejected", feedback: PLAN_RECORDED_FEEDBACK }
    : { outcome: "approved" };
}

/** xAI's extension requests, under both spellings Grok builds have used. */
export const XAI_EXTENSIONS: AcpExtensions = {
  requests: Object.fromEntries([
    ...XAI_METHODS.askUserQuestion.map((method) => [method, askUserQuestion] as const),
    ...XAI_METHODS.exitPlanMode.map((method) => [method, exitPlanMode] as const),
  ]),
};
