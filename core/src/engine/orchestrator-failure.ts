/**
 * Expected denials of orchestration operations (seed 000 "Policy And Idempotency"). Every
 * transport reports them by code with a message a model can act on.
 */
export const ORCHESTRATOR_FAILURE_CODES = [
  "capability_denied",
  "parent_not_active",
  "provider_unavailable",
  "model_unavailable",
  "runtime_mode_escalation_denied",
  "interaction_mode_escalation_denied",
  "task_not_found",
  "task_not_cancellable",
  "thread_not_found",
  "run_not_found",
  "thread_not_sendable",
  "thread_not_interruptible",
  "invalid_request",
  "orchestration_error",
] as const;

export type OrchestratorFailureCode = (typeof ORCHESTRATOR_FAILURE_CODES)[number];

/** A typed, expected denial. */
export class OrchestratorFailure extends Error {
  readonly code: OrchestratorFailureCode;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: OrchestratorFailureCode, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = "OrchestratorFailure";
    this.code = code;
    this.details = details;
  }

  toJSON(): { code: OrchestratorFailureCode; message: string; details: Readonly<Record<string, unknown>> } {
    return { code: this.code, message: this.message, details: this.details };
  }
}

export function isOrchestratorFailure(error: unknown): error is OrchestratorFailure {
  return error instanceof OrchestratorFailure;
}

/** A reused clientRequestId with different arguments is the caller's mistake: `invalid_request`. */
export function conflictsAsInvalid<T>(run: () => Promise<T>): Promise<T>;
export function conflictsAsInvalid<T>(run: () => T): T;
export function conflictsAsInvalid<T>(run: () => T | Promise<T>): T | Promise<T> {
  try {
    const value = run();
    return value instanceof Promise ? value.catch(asInvalidWhenConflict) : value;
  } catch (error) {
    return asInvalidWhenConflict(error);
  }
}

function asInvalidWhenConflict(error: unknown): never {
  if ((error as { code?: string }).code === "conflict") {
    throw new OrchestratorFailure(
      "invalid_request",
      "This clientRequestId was already used with different arguments; use a new clientRequestId for new work, or repeat the original arguments to read it back.",
    );
  }
  throw error;
}
