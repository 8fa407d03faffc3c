import { OrchestratorCapabilitiesInput, OrchestratorCapabilitiesOutput } from "./orchestrator-capabilities.js";

/** listProviders (HTTP API): orchestrator_capabilities' providers, from the provider snapshot. */
export const ListProvidersInput = OrchestratorCapabilitiesInput;

export const ListProvidersOutput = OrchestratorCapabilitiesOutput.pick({ providers: true });
