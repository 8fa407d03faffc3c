import type { UserInputQuestion } from "@switchyard/sdk";
import { acpSdk, type AcpExtensionInput, type AcpExtensions } from "@switchyard/sdk/acp";
import {
  TEMPLATE_EXTENSION_METHODS,
  askUserQuestionParamsSchema,
  type AskUserQuestionResult,
} from "./template-wire.js";

/**
 * `_template/ask_user_question` → a blocking `user_input` runtime request. The session's request
 * book gives it one resolution: answers, or `cancelled` when the host dismisses it, the turn
 * ends or the agent withdraws the request (`signal`). Nothing answers it automatically.
 */
async function askUserQuestion({ params, session, signal }: AcpExtensionInput): Promise<AskUserQuestionResult> {
  const parsed = askUserQuestionParamsSchema.safeParse(params);
  if (!parsed.success)
    throw acpSdk.RequestError.invalidParams(
      parsed.error.issues,
      "ask_user_question needs a sessionId and at least one question",
    );
  const turn = session?.activeTurn;
  if (!session || !turn) return { outcome: "cancelled" };
  const questions: UserInputQuestion[] = parsed.data.questions.map((question, index) => ({
    id: `q${index + 1}`,
    question: question.question,
    ...(question.header !== undefined ? { header: question.header } : {}),
    ...(question.options.length > 0
      ? {
          options: question.options.map(({ label, description }) => ({
            label,
            ...(description ? { description } : {}),
          })),
        }
      : {}),
    ...(question.multiSelect ? { multiSelect: true } : {}),
  }));
  const outcome = await session.openRuntimeRequest(
    turn.turnId,
    { kind: "user_input", questions, blocking: true },
    { signal },
  );
  if (outcome.kind === "cancelled" || outcome.response.kind !== "user_input") return { outcome: "cancelled" };
  const given = outcome.response.answers;
  const answers: Record<string, string> = {};
  parsed.data.questions.forEach((question, index) => {
    const answer = given[`q${index + 1}`];
    if (answer !== undefined) answers[question.question] = typeof answer === "string" ? answer : answer.join(", ");
  });
  return { outcome: "answered", answers };
}

/** The agent's extension requests, registered on the shared adapter's ACP connection. */
export const TEMPLATE_EXTENSIONS: AcpExtensions = {
  requests: { [TEMPLATE_EXTENSION_METHODS.askUserQuestion]: askUserQuestion },
};
