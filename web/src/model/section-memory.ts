/** The sidebar sections a person can fold. */
export type SectionName = "snoozed" | "settled" | "subagents";

const KEY = "switchyard.sidebar.sections";
const DEFAULTS: Readonly<Record<SectionName, boolean>> = { snoozed: false, settled: false, subagents: true };

/** Which sections are open, as the person left them (localStorage), else the defaults. */
export function loadOpenSections(storage: Pick<Storage, "getItem"> | null): Record<SectionName, boolean> {
  try {
    const saved = JSON.parse(storage?.getItem(KEY) ?? "{}") as Partial<Record<SectionName, unknown>>;
    const open = { ...DEFAULTS };
    for (const name of Object.keys(DEFAULTS) as SectionName[])
      if (typeof saved[name] === "boolean") open[name] = saved[name];
    return open;
  } catch {
    return { ...DEFAULTS };
  }
}

/** Remembers which sections are open. */
export function saveOpenSections(storage: Pick<Storage, "setItem"> | null, open: Record<SectionName, boolean>): void {
  try {
    storage?.setItem(KEY, JSON.stringify(open));
  } catch {
    // Storage full or disabled: the sections still work, they are just not remembered.
  }
}
