import { SwitchyardError } from "@switchyard/sdk";

/** What every SDK call resolves to (`ThrowOnError` false). */
interface SdkResult<T> {
  readonly data?: T;
  readonly error?: unknown;
  readonly response?: Response;
}

function describe(error: unknown): { readonly name: string | null; readonly message: string } {
  if (typeof error === "object" && error !== null) {
    const { name, data, message } = error as { name?: unknown; data?: { message?: unknown }; message?: unknown };
    const text =
      typeof data?.message === "string" ? data.message : typeof message === "string" ? message : JSON.stringify(error);
    return { name: typeof name === "string" ? name : null, message: text };
  }
  return { name: null, message: String(error) };
}

/**
 * One request to the OpenCode server with a time limit. An answer OpenCode refused becomes a
 * typed error: `not_found` for its NotFoundError, `provider_error` otherwise; a server that
 * does not answer at all is `session_closed` (or `timeout`).
 */
export async function callOpenCode<T>(
  what: string,
  call: (signal: AbortSignal) => Promise<SdkResult<T>>,
  timeoutMs: number,
): Promise<T> {
  const signal = AbortSignal.timeout(timeoutMs);
  let result: SdkResult<T>;
  try {
    result = await call(signal);
  } catch (error) {
    if (signal.aborted)
      throw new SwitchyardError("timeout", `OpenCode did not answer ${what} within ${timeoutMs} ms.`, {
        request: what,
      });
    throw new SwitchyardError(
      "session_closed",
      `OpenCode's server did not answer ${what}: ${describe(error).message}`,
      { request: what },
    );
  }
  if (result.error !== undefined && result.response === undefined) {
    if (signal.aborted)
      throw new SwitchyardError("timeout", `OpenCode did not answer ${what} within ${timeoutMs} ms.`, {
        request: what,
      });
    throw new SwitchyardError(
      "session_closed",
      `OpenCode's server did not answer ${what}: ${describe(result.error).message}`,
      { request: what },
    );
  }
  if (result.error !== undefined) {
    const { name, message } = describe(result.error);
    const status = result.response?.status;
    const code = name === "NotFoundError" || status === 404 ? "not_found" : "provider_error";
    throw new SwitchyardError(code, `OpenCode refused ${what}: ${message}`, {
      request: what,
      ...(status !== undefined ? { status } : {}),
      ...(name !== null ? { error: name } : {}),
    });
  }
  return result.data as T;
}
