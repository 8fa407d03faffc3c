import type { ProviderAvailability } from "../engine/provider-catalog.js";
import type { ModelSource } from "../spec/index.js";

/**
 * Where an instance's advertised models come from, for `switchyard providers`: the provider's
 * word per model (`ModelDescriptor.source`), `custom` for the instance's `customModels` the
 * provider does not list, `unknown` where the provider does not say. Read from data only.
 */
export type ModelSourceGroup = ModelSource | "custom" | "unknown";

const ORDER: readonly ModelSourceGroup[] = ["custom", "harness_config", "endpoint", "harness_catalog", "unknown"];

/** The model ids of each source that has any, in the order above and the instance's model order. */
export function modelSources(
  availability: Pick<ProviderAvailability, "models">,
): Partial<Record<ModelSourceGroup, string[]>> {
  const groups: Partial<Record<ModelSourceGroup, string[]>> = {};
  for (const model of availability.models) {
    const group: ModelSourceGroup = model.source ?? (model.custom ? "custom" : "unknown");
    (groups[group] ??= []).push(model.id);
  }
  return Object.fromEntries(
    ORDER.filter((group) => groups[group] !== undefined).map((group) => [group, groups[group]!]),
  );
}

/**
 * A sentence for people when some of an instance's models are its harness's own catalog, which
 * the harness lists whatever endpoint it is pointed at; null otherwise.
 */
export function harnessCatalogNote(
  availability: Pick<ProviderAvailability, "instanceId" | "driver" | "models" | "status">,
): string | null {
  const catalog = modelSources(availability).harness_catalog ?? [];
  if (catalog.length === 0) return null;
  const harness = availability.status?.harness?.displayName ?? availability.driver;
  const share =
    catalog.length === availability.models.length
      ? `its ${catalog.length} models come`
      : `${catalog.length} of its ${availability.models.length} models come`;
  return `${availability.instanceId}: ${share} from ${harness}'s own catalog, which it lists whatever endpoint it is pointed at; if it uses your own endpoint or gateway, name the models that serves in customModels (docs/models.md).`;
}
