import { UnsupportedCapabilityError, type CapabilityName, type ProviderCapabilities } from "@switchyard/spec";

/** The typed error an adapter throws for a capability it declared false. @public */
export function unsupported(
  capability: CapabilityName,
  provider: string,
  message?: string,
): UnsupportedCapabilityError {
  return new UnsupportedCapabilityError(capability, provider, message);
}

/** Reads a dotted capability as a boolean (quality values count as present unless `none`). @public */
export function capabilityEnabled(capabilities: ProviderCapabilities, capability: CapabilityName): boolean {
  const [group, field] = capability.split(".") as [keyof ProviderCapabilities, string];
  const value = (capabilities[group] as unknown as Record<string, unknown>)[field];
  if (typeof value === "boolean") return value;
  if (typeof value === "string") return value !== "none";
  if (typeof value === "object" && value !== null) return Object.values(value).some((v) => v === true);
  return false;
}

/** Throws `unsupported_capability` unless the capability is declared. @public */
export function requireCapability(
  capabilities: ProviderCapabilities,
  capability: CapabilityName,
  provider: string,
): void {
  if (!capabilityEnabled(capabilities, capability)) throw unsupported(capability, provider);
}
