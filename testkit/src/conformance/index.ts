/**
 * `@switchyard/testkit/conformance`: the shared adapter conformance suite. It imports
 * vitest, so it lives on its own subpath; the rest of the testkit runs anywhere.
 */
export {
  describeAdapterConformance,
  type AdapterConformanceOptions,
  type ConformanceScript,
  type ConformanceSetup,
} from "./describe-adapter-conformance.js";
export { scriptedModelScript } from "./scripted-model-script.js";
export { fakeCursorScript } from "./fake-cursor-script.js";
