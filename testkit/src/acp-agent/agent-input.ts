import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

/**
 * How many times `needle` appears in what the scripted ACP agent was prompted with, in the one
 * session (of those saved under `stateDir`) that saw it most: the agent's stand-in for "the
 * model's input". A session is saved after each turn, so call it once the turn has ended.
 */
export function countInScriptedAgentInput(stateDir: string, needle: string): number {
  let most = 0;
  let files: string[];
  try {
    files = readdirSync(stateDir).filter((file) => file.endsWith(".json"));
  } catch {
    return 0;
  }
  for (const file of files) {
    const stored = JSON.parse(readFileSync(path.join(stateDir, file), "utf8")) as { history?: { user: string }[] };
    const seen = (stored.history ?? []).reduce((count, turn) => count + turn.user.split(needle).length - 1, 0);
    most = Math.max(most, seen);
  }
  return most;
}
