import { describe, expect, it } from "vitest";
import { FIRST_N_MODELS, shortModelList, type CatalogModel } from "../src/services/model-short-list.js";

const model = (id: string, extra: Partial<CatalogModel> = {}): CatalogModel => ({
  id,
  custom: false,
  legacy: false,
  ...extra,
});
const ids = (list: ReturnType<typeof shortModelList>) => list.models.map((m) => m.id);

describe("model short list (orchestrator_capabilities)", () => {
  // Custom models come first from the registry; then the provider's order, with legacy models among them.
  const catalog = [
    model("mine", { custom: true }),
    model("old-1", { legacy: true }),
    ...Array.from({ length: 10 }, (_, i) => model(`m${i + 1}`)),
    model("old-2", { legacy: true }),
  ];

  it("first_n: custom, favorite and caller models, plus the first 8 current models in the user's order", () => {
    const list = shortModelList({
      catalog,
      favorites: ["m9", "old-2"],
      callerModel: "m7",
      rule: "first_n",
      search: "",
    });
    // User order: mine, m9, old-2 (favorites, as configured), then m1…m10 in the provider's order.
    // The first 8 current: mine, m9, m1…m6. Always listed besides: old-2 (favorite, legacy), m7 (caller).
    expect(ids(list)).toEqual(["mine", "m9", "old-2", "m1", "m2", "m3", "m4", "m5", "m6", "m7"]);
    expect(list.models.find((m) => m.id === "old-2")).toMatchObject({ favorite: true, legacy: true });
    expect(list.models.find((m) => m.id === "m7")).toMatchObject({ callerModel: true, favorite: false });
    expect(list.omitted).toBe(catalog.length - 10);
    expect(FIRST_N_MODELS).toBe(8);
  });

  it("all_current: every current model, legacy ones only when always listed or searched for", () => {
    const list = shortModelList({ catalog, favorites: [], callerModel: null, rule: "all_current", search: "" });
    expect(ids(list)).toEqual(["mine", ...Array.from({ length: 10 }, (_, i) => `m${i + 1}`)]);
    expect(list.omitted).toBe(2);
    const searched = shortModelList({ catalog, favorites: [], callerModel: null, rule: "all_current", search: "old" });
    expect(ids(searched).slice(-2)).toEqual(["old-1", "old-2"]);
    expect(searched.omitted).toBe(0);
  });

  it("ignores a favorite the provider does not advertise, and never lists a model twice", () => {
    const list = shortModelList({
      catalog,
      favorites: ["gone", "mine"],
      callerModel: "mine",
      rule: "first_n",
      search: "m",
    });
    expect(ids(list)).not.toContain("gone");
    expect(new Set(ids(list)).size).toBe(ids(list).length);
    expect(list.models.length + list.omitted).toBe(catalog.length);
  });
});
