import {
  SwitchyardError,
  harnessNotFoundMessage,
  defineAdapter,
  defineDriver,
  type CreateInstanceInput,
  type OrchestrationAdapter,
  type PluginContext,
  type ProviderDriver,
  type ProviderInstanceDescriptor,
} from "@switchyard/sdk";
import { PI_CAPABILITIES } from "./pi-capabilities.js";
import { writeSwitchyardExtension } from "./pi-extension-writer.js";
import { findPi, piEnvironment } from "./pi-launch.js";
import { piOptionsSchema, type PiOptions } from "./pi-options.js";
import { probePi } from "./pi-probe.js";
import { PiProviderSession } from "./pi-session.js";

/** The adapter of one Pi instance, with its live sessions. */
export type PiAdapter = OrchestrationAdapter & { readonly sessions: ReadonlySet<PiProviderSession> };

/**
 * The OrchestrationAdapter of one Pi instance: each session runs its own `pi --mode rpc`
 * process with the Switchyard extension.
 */
export function createPiAdapter(
  instance: ProviderInstanceDescriptor,
  options: PiOptions,
  context: PluginContext,
): PiAdapter {
  return defineAdapter<PiProviderSession>({
    instance,
    driverKind: "pi",
    capabilities: PI_CAPABILITIES,
    probe: (probeOptions) => probePi({ instance, options, context }, probeOptions),
    async createSession(input, onClosed) {
      const { search, binary } = await findPi(options, context, piEnvironment(instance, {}));
      if (binary === null)
        throw new SwitchyardError("provider_unavailable", harnessNotFoundMessage(search), {
          piPath: options.piPath ?? null,
        });
      const extensionPath = await writeSwitchyardExtension(context.paths.cacheDir);
      return new PiProviderSession({ instance, options, context, binary, extensionPath, onClosed }, input);
    },
  });
}

/** The `pi` driver. */
export function createPiDriver(): ProviderDriver<PiOptions> {
  return defineDriver<PiOptions>({
    driverKind: "pi",
    displayName: "Pi",
    optionsSchema: piOptionsSchema,
    capabilities: PI_CAPABILITIES,
    create: ({ instance, options, context }: CreateInstanceInput<PiOptions>) =>
      createPiAdapter(instance, options, context),
  });
}
