import { existsSync } from "node:fs";
import { SwitchyardError } from "@switchyard/sdk";
import type { PiRpcClient } from "./pi-rpc-client.js";
import type { PiSessionState } from "./pi-wire.js";

/**
 * Copies an idle Pi conversation with `clone` (a new session file with the current branch) and
 * returns the copy's file. Pi then works in the copy, so it is switched back to `original` at
 * once: the session goes on in its own file, and the copy is for a new session to resume.
 */
export async function clonePiSession(client: PiRpcClient, original: string, timeoutMs: number): Promise<string> {
  await client.call({ type: "clone" }, timeoutMs);
  const copy = await client.call<PiSessionState>({ type: "get_state" }, timeoutMs);
  await client.call({ type: "switch_session", sessionPath: original }, timeoutMs);
  const back = await client.call<PiSessionState>({ type: "get_state" }, timeoutMs);
  if (back.sessionFile !== original) {
    throw new SwitchyardError(
      "internal",
      `pi did not switch back to "${original}" after cloning (it is on "${back.sessionFile ?? "no file"}").`,
    );
  }
  if (copy.sessionFile === undefined || copy.sessionFile === original || !existsSync(copy.sessionFile)) {
    throw new SwitchyardError("provider_error", "pi's clone produced no new session file.");
  }
  return copy.sessionFile;
}
