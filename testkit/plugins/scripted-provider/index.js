// The plugin entry: the scripted provider lives in the testkit; this folder only gives it a
// manifest so the host loads it exactly like a third-party plugin.
export { scriptedProviderPlugin as default } from "@switchyard/testkit/scripted-provider";
