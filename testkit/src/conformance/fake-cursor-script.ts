import type { FakeCursorBackend } from "../cursor-backend/index.js";
import type { ConformanceScript } from "./describe-adapter-conformance.js";

/**
 * Conformance prompts for the real Cursor SDK against the fake Cursor backend. The backend
 * plays the scripted model server's directives, so the prompts are the same; what differs is
 * where holds are released and where the model's input is read (the runs the backend saw).
 * Cursor's SDK raises no approvals, so there is no approval prompt.
 */
export function fakeCursorScript(backend: FakeCursorBackend): ConformanceScript {
  return {
    text: (marker) => `say it @@reply ${marker}`,
    shell: (marker) => `run it @@shell echo ${marker} @@then @@reply shell said {{output}}`,
    hold: (gate, marker) => `hold on @@hold ${gate} @@reply ${marker}`,
    release: (gate) => backend.release(gate),
    mcpTool: (tool, args, marker) =>
      `call it @@tool ${tool} ${JSON.stringify(args)} @@then @@reply ${marker} {{output}}`,
    recall: () => `recall @@reply history: {{history}}`,
    holdInTool: (marker) => `keep at it @@shell sleep 45; echo ${marker} @@then @@reply ${marker} {{output}}`,
    countInModelInput: (needle) => backend.countInModelInput(needle),
  };
}
