import * as acp from "@agentclientprotocol/sdk/unstable";
import { SwitchyardError, hasErrorCode } from "@switchyard/spec";
import { REFUSING_HANDLERS, describeError, withTimeout } from "./acp-connection.js";
import { startAgent, type AcpAgentLaunch } from "./acp-agent-runtime.js";

/**
 * A native fork (`/unstable` `session/fork`), made by an agent process of its own that exits
 * right after answering.
 *
 * Switchyard never uses a fork on the connection that made it: the fork is a new thread whose
 * session opens it with `session/load` (or `session/resume`) in its own process. An agent may
 * keep what one of its processes created until that process exits: codex-acp 2.x holds the
 * forked Codex thread as its active writer, even after `session/close`, and refuses to load it
 * anywhere else ("in use by another Codex client"). So the fork is asked of a disposable process
 * (`initialize`, `authenticate`, `session/fork`, exit), never of the source session's own agent,
 * which keeps running its conversation undisturbed. The agent forks the source from what it
 * persisted, which is the latest state between turns.
 *
 * No MCP servers go with the fork: the fork's own session injects its credential when it opens.
 */
export async function forkInDisposableAgent<TOptions>(
  launch: AcpAgentLaunch<TOptions>,
  sourceSessionId: string,
): Promise<string> {
  const runtime = await startAgent(launch, 0, REFUSING_HANDLERS, () => undefined);
  try {
    const forked = await withTimeout(
      runtime.connection.agent.request(acp.methods.agent.session.fork, {
        sessionId: sourceSessionId,
        cwd: launch.cwd,
        mcpServers: [],
      }),
      launch.timeoutMs,
      "The agent's session/fork",
    );
    return forked.sessionId;
  } catch (error) {
    if (hasErrorCode(error)) throw error;
    throw new SwitchyardError(
      "provider_error",
      `The agent refused session/fork of "${sourceSessionId}": ${describeError(error).message}`,
      { resumeCursor: sourceSessionId },
    );
  } finally {
    runtime.connection.close();
    await runtime.channel.kill().catch(() => undefined);
  }
}
