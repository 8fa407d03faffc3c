/**
 * xAI's ACP extensions, as the Grok CLI (`grok agent stdio`) sends them to the client. Not
 * generated: Grok publishes no schema for them. The shapes follow what public ACP clients that
 * talk to the real CLI handle; see README.md for what is inferred.
 */
import { acpSdk } from "@switchyard/sdk/acp";

/** Extension method names. Grok builds have used both spellings; ACP reserves the `_` prefix. */
export const XAI_METHODS = {
  askUserQuestion: ["_x.ai/ask_user_question", "x.ai/ask_user_question"],
  exitPlanMode: ["_x.ai/exit_plan_mode", "x.ai/exit_plan_mode"],
} as const;

/** One option of a structured question. */
export interface XaiQuestionOption {
  readonly label: string;
  readonly description?: string;
}

/** One structured question (Grok's AskUserQuestion tool). */
export interface XaiQuestion {
  /** The question; also the key of its answer. */
  readonly question: string;
  /** A short header (chip), when given. */
  readonly header?: string;
  /** Suggested answers. */
  readonly options: readonly XaiQuestionOption[];
  /** More than one option may be chosen. */
  readonly multiSelect: boolean;
}

/** `_x.ai/ask_user_question` params: the agent blocks its tool call until the client answers. */
export interface XaiAskUserQuestionParams {
  readonly sessionId: string;
  /** The AskUserQuestion tool call that waits. */
  readonly toolCallId?: string;
  readonly questions: readonly XaiQuestion[];
}

/** `_x.ai/ask_user_question` result. Answers are keyed by question text; several choices join with ", ". */
export type XaiAskUserQuestionResult =
  | { readonly outcome: "answered"; readonly answers: Readonly<Record<string, string>> }
  | { readonly outcome: "declined" }
  | { readonly outcome: "cancelled" };

/** `_x.ai/exit_plan_mode` params: the agent asks to leave plan mode with this plan. */
export interface XaiExitPlanModeParams {
  readonly sessionId: string;
  readonly toolCallId?: string;
  /** The plan, as markdown (may be empty). */
  readonly planContent: string;
}

/**
 * `_x.ai/exit_plan_mode` result. `approved` leaves plan mode and implements the plan; any other
 * outcome keeps plan mode and ends the turn, with `feedback` shown to the model.
 */
export type XaiExitPlanModeResult =
  { readonly outcome: "approved" } | { readonly outcome: "rejected" | "cancelled"; readonly feedback?: string };

type Json = Record<string, unknown>;

function record(value: unknown): Json | null {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : null;
}

/** Some clients see extension params wrapped once more in `{params}`; accept both. */
function unwrap(raw: unknown): Json {
  const outer = record(raw);
  if (outer === null) throw acpSdk.RequestError.invalidParams(undefined, "expected an object");
  const inner = record(outer.params);
  return inner !== null && outer.sessionId === undefined ? inner : outer;
}

function optionalString(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

/** Validates `_x.ai/ask_user_question` params (JSON-RPC invalid params on a bad shape). */
export function parseAskUserQuestionParams(raw: unknown): XaiAskUserQuestionParams {
  const params = unwrap(raw);
  const questions = Array.isArray(params.questions) ? params.questions : null;
  if (typeof params.sessionId !== "string" || questions === null || questions.length === 0) {
    throw acpSdk.RequestError.invalidParams(undefined, "ask_user_question needs a sessionId and at least one question");
  }
  return {
    sessionId: params.sessionId,
    ...(optionalString(params.toolCallId) !== undefined ? { toolCallId: params.toolCallId as string } : {}),
    questions: questions.map((value, index) => {
      const question = record(value);
      if (question === null || typeof question.question !== "string") {
        throw acpSdk.RequestError.invalidParams({ index }, "each question needs a question text");
      }
      const header = optionalString(question.header);
      const options = (Array.isArray(question.options) ? question.options : [])
        .map(record)
        .filter((option): option is Json => option !== null && typeof option.label === "string")
        .map((option) => {
          const description = optionalString(option.description);
          return { label: option.label as string, ...(description !== undefined ? { description } : {}) };
        });
      return {
        question: question.question,
        ...(header !== undefined ? { header } : {}),
        options,
        multiSelect: question.multiSelect === true || question.multi_select === true,
      };
    }),
  };
}

/** Validates `_x.ai/exit_plan_mode` params. */
export function parseExitPlanModeParams(raw: unknown): XaiExitPlanModeParams {
  const params = unwrap(raw);
  if (typeof params.sessionId !== "string")
    throw acpSdk.RequestError.invalidParams(undefined, "exit_plan_mode needs a sessionId");
  const plan = params.planContent ?? params.plan_content ?? params.plan;
  return {
    sessionId: params.sessionId,
    ...(optionalString(params.toolCallId) !== undefined ? { toolCallId: params.toolCallId as string } : {}),
    planContent: typeof plan === "string" ? plan : "",
  };
}
