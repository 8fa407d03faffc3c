export {
  scriptedProviderPlugin,
  scriptedDriver,
  FULL_SCRIPTED_CAPABILITIES,
  SCRIPTED_PROVIDER_PLUGIN_DIR,
} from "./scripted-plugin.js";
export { ScriptedAdapter, gateReached, releaseGate, type ScriptedProviderOptions } from "./scripted-adapter.js";
export { parseProviderScript, type ProviderScriptStep, type ParsedProviderScript } from "./scripted-script.js";
