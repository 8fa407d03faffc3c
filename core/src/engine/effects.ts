import type { ApprovalDecision } from "../spec/index.js";

/** Provider effects the outbox carries. Process-bound ones are never blindly replayed after a crash. */
export const EFFECT = {
  /** Start the attempt's provider turn (opening or resuming the session first). */
  turnStart: "turn.start",
  /** Add text to the attempt's running turn. */
  turnSteer: "turn.steer",
  /** Interrupt the attempt's running turn. */
  turnInterrupt: "turn.interrupt",
  /** Answer a runtime request at the provider. */
  requestRespond: "request.respond",
} as const;

export type EffectType = (typeof EFFECT)[keyof typeof EFFECT];

export interface TurnStartPayload {
  readonly attemptId: string;
}
export interface TurnSteerPayload {
  readonly attemptId: string;
  readonly runId: string;
  readonly messageId: string;
  readonly text: string;
}
export interface TurnInterruptPayload {
  readonly attemptId: string;
  readonly reason: string;
  readonly hard: boolean;
}
export interface RequestRespondPayload {
  readonly requestId: string;
  readonly decision?: ApprovalDecision;
}
