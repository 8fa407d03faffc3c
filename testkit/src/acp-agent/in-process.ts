import type { AnyMessage } from "@agentclientprotocol/sdk/unstable";
import type { AcpChannel, AcpChannelFactory } from "@switchyard/sdk/acp";
import { createScriptedAcpAgent, type ScriptedAcpAgentOptions } from "./scripted-agent.js";

/**
 * A channel factory that runs the scripted agent in this process over an in-memory message
 * pipe: fast, but without a process (no pid, no process group). `@crash` closes the connection.
 * Prefer the real child process (`scriptedAgentCommand`) for anything about process lifecycle.
 */
export function scriptedAgentChannelFactory(options: ScriptedAcpAgentOptions = {}): AcpChannelFactory {
  return () => {
    const toAgent = new TransformStream<AnyMessage, AnyMessage>();
    const toClient = new TransformStream<AnyMessage, AnyMessage>();
    let connection: { close(): void; closed: Promise<void> } | null = null;
    const agent = createScriptedAcpAgent(options, () => connection?.close());
    connection = agent.connect({ writable: toClient.writable, readable: toAgent.readable });
    const live = connection;
    const exited = live.closed.then(() => ({ exitCode: 0, signal: null }));
    return {
      stream: { writable: toAgent.writable, readable: toClient.readable },
      exited,
      kill: async () => {
        live.close();
        await exited;
      },
    } satisfies AcpChannel;
  };
}
