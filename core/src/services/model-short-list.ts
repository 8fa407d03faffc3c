import type { ModelShortList } from "../spec/index.js";

/** How many current models a `first_n` provider lists in the user's order. */
export const FIRST_N_MODELS = 8;

/** A model in an instance's catalog: its custom models first, then the provider's, no duplicates. */
export interface CatalogModel {
  readonly id: string;
  readonly custom: boolean;
  readonly legacy: boolean;
  /** The reasoning efforts the model takes (`ModelDescriptor.efforts`); absent when none. */
  readonly efforts?: readonly string[];
  readonly defaultEffort?: string;
}

/** A model as `orchestrator_capabilities` lists it. */
export interface ListedModel extends CatalogModel {
  readonly favorite: boolean;
  /** The caller's own model. */
  readonly callerModel: boolean;
}

/** The shortened list, and how many models it leaves out. */
export interface ShortModelList {
  readonly models: readonly ListedModel[];
  readonly omitted: number;
}

/** What {@link shortModelList} needs. */
export interface ShortModelListInput {
  readonly catalog: readonly CatalogModel[];
  /** The instance's favorite models, in the user's order (config). */
  readonly favorites: readonly string[];
  readonly callerModel: string | null;
  /** The provider's declared rule (`capabilities.models.shortList`). */
  readonly rule: ModelShortList;
  /** Lowercase search text: matching models outside the short list are added, legacy too. */
  readonly search: string;
}

/**
 * The model list an agent sees, short because every call lands in its context (seed 000):
 * custom, favorite and the caller's own models, plus every current (non-legacy) model
 * (`all_current`) or the first {@link FIRST_N_MODELS} current models in the user's order
 * (`first_n`). The user's order is the instance's custom models, then its favorites, as the
 * config lists them, then the provider's own order. Search matches come after, in that order.
 */
export function shortModelList(input: ShortModelListInput): ShortModelList {
  const favorites = new Set(input.favorites);
  const favoriteRank = (id: string) => input.favorites.indexOf(id);
  const userOrder = [
    ...input.catalog.filter((model) => model.custom),
    ...input.catalog
      .filter((model) => !model.custom && favorites.has(model.id))
      .sort((a, b) => favoriteRank(a.id) - favoriteRank(b.id)),
    ...input.catalog.filter((model) => !model.custom && !favorites.has(model.id)),
  ].map((model): ListedModel => ({
    ...model,
    favorite: favorites.has(model.id),
    callerModel: model.id === input.callerModel,
  }));

  const current = userOrder.filter((model) => !model.legacy);
  const cut = new Set(input.rule === "all_current" ? current : current.slice(0, FIRST_N_MODELS));
  const listed = userOrder.filter((model) => model.custom || model.favorite || model.callerModel || cut.has(model));
  const matches =
    input.search === ""
      ? []
      : userOrder.filter((model) => !listed.includes(model) && model.id.toLowerCase().includes(input.search));
  return { models: [...listed, ...matches], omitted: userOrder.length - listed.length - matches.length };
}
