import type { CapabilityNameV1 } from "./v1/capabilities.js";

/**
 * Stable error codes. Errors cross the plugin boundary by `code`, never by `instanceof`: a
 * plugin may bundle its own copy of the sdk.
 * @public
 */
export const ERROR_CODES = [
  /** A declared-false or unimplemented capability was asked for. */
  "unsupported_capability",
  /** An input failed validation; `details` names the field. */
  "invalid_input",
  /** The provider is not installed, not executable, not authenticated or disabled. */
  "provider_unavailable",
  /** The provider (harness or its model) reported an error. */
  "provider_error",
  /** The provider session or its process is gone. */
  "session_closed",
  /** A turn operation targeted a turn that is not running. */
  "turn_not_active",
  /** A named object does not exist. */
  "not_found",
  /** The request conflicts with current state (for example a reused command id with other input). */
  "conflict",
  /** A plugin or object declares a spec version this host does not implement. */
  "spec_incompatible",
  /** A plugin's manifest or definition is malformed. */
  "plugin_invalid",
  /** A configuration file is malformed. */
  "config_invalid",
  /** An operation exceeded its time limit. */
  "timeout",
  /** The operation was cancelled by its caller. */
  "cancelled",
  /**
   * Switchyard's database stayed locked by another connection longer than the store waits for
   * it; nothing was written, and the same operation can be retried.
   */
  "store_busy",
  /** A bug or an unexpected state; the message says where. */
  "internal",
] as const;

/** One of {@link ERROR_CODES}. @public */
export type ErrorCode = (typeof ERROR_CODES)[number];

/** The plain shape every Switchyard error has; what crosses process and plugin boundaries. @public */
export interface SwitchyardErrorShape {
  /** Stable machine-readable code. */
  readonly code: ErrorCode;
  /** What went wrong and, where possible, what to do next. */
  readonly message: string;
  /** The offending values, for programs (never secrets). */
  readonly details?: Readonly<Record<string, unknown>>;
}

/** Base class for typed errors. Test with {@link hasErrorCode}, not `instanceof`. @public */
export class SwitchyardError extends Error implements SwitchyardErrorShape {
  /** Stable machine-readable code. */
  readonly code: ErrorCode;
  /** The offending values, for programs (never secrets). */
  readonly details?: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "SwitchyardError";
    this.code = code;
    if (details !== undefined) this.details = details;
  }

  /** The plain shape, for JSON. */
  toJSON(): SwitchyardErrorShape {
    return this.details === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, details: this.details };
  }
}

/** Thrown when a capability the caller needs is declared false or not implemented. @public */
export class UnsupportedCapabilityError extends SwitchyardError {
  /** The capability that was missing. */
  readonly capability: CapabilityNameV1;

  constructor(capability: CapabilityNameV1, provider: string, message?: string) {
    super("unsupported_capability", message ?? `Provider "${provider}" does not support ${capability}.`, {
      capability,
      provider,
    });
    this.name = "UnsupportedCapabilityError";
    this.capability = capability;
  }
}

/** True when `error` carries the given code (or any Switchyard code when `code` is omitted). @public */
export function hasErrorCode(error: unknown, code?: ErrorCode): error is SwitchyardErrorShape {
  if (typeof error !== "object" || error === null) return false;
  const candidate = (error as { code?: unknown }).code;
  if (typeof candidate !== "string" || !(ERROR_CODES as readonly string[]).includes(candidate)) return false;
  return code === undefined || candidate === code;
}

/** Converts anything thrown into the plain error shape, keeping a code it already carries. @public */
export function toErrorShape(error: unknown, fallback: ErrorCode = "internal"): SwitchyardErrorShape {
  if (hasErrorCode(error)) {
    return error.details === undefined
      ? { code: error.code, message: error.message }
      : { code: error.code, message: error.message, details: error.details };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { code: fallback, message };
}
