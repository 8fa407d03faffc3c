import type { ScriptedModelServer } from "../model-server/index.js";
import type { ConformanceScript } from "./describe-adapter-conformance.js";

/**
 * Conformance prompts for a real harness driven by the scripted model server. Prompts start
 * with a word because some harnesses read a leading `@` as a file include.
 */
export function scriptedModelScript(
  server: ScriptedModelServer,
  options: { approvalCommand?: boolean } = {},
): ConformanceScript {
  return {
    text: (marker) => `say it @@reply ${marker}`,
    shell: (marker) => `run it @@shell echo ${marker} @@then @@reply shell said {{output}}`,
    hold: (gate, marker) => `hold on @@hold ${gate} @@reply ${marker}`,
    release: (gate) => server.release(gate),
    mcpTool: (tool, args, marker) =>
      `call it @@tool ${tool} ${JSON.stringify(args)} @@then @@reply ${marker} {{output}}`,
    recall: () => `recall @@reply history: {{history}}`,
    ...(options.approvalCommand === false
      ? {}
      : { approval: (marker: string) => `approve it @@shell echo ${marker} @@then @@reply approved {{output}}` }),
    holdInTool: (marker) => `keep at it @@shell sleep 45; echo ${marker} @@then @@reply ${marker} {{output}}`,
    countInModelInput: (needle) => {
      const request = [...server.requests]
        .reverse()
        .find((r) => !r.sideCall && JSON.stringify(r.body ?? null).includes(needle));
      return request === undefined ? 0 : JSON.stringify(request.body).split(needle).length - 1;
    },
  };
}
