/** Text an agent is writing now, not yet a complete item (the event stream's output.delta frames). */
export interface LiveItem {
  /** The id the completed item will have. */
  readonly itemId: string;
  readonly kind: "assistant_message" | "reasoning";
  readonly text: string;
}

/**
 * A thread's live items after one delta: `offset` 0 carries the whole text so far (the stream's
 * first frame of an item, or after it dropped some), any other offset continues what is held.
 * A delta that does not continue it (a frame this page missed) is ignored; the server sends the
 * whole text again after a gap, and the completed item replaces it all anyway.
 */
export function withDelta(
  live: readonly LiveItem[],
  delta: { readonly itemId: string; readonly kind: LiveItem["kind"]; readonly offset: number; readonly delta: string },
): readonly LiveItem[] {
  const index = live.findIndex((entry) => entry.itemId === delta.itemId);
  if (index === -1)
    return delta.offset === 0 ? [...live, { itemId: delta.itemId, kind: delta.kind, text: delta.delta }] : live;
  const held = live[index]!;
  let text: string;
  if (delta.offset === 0) text = delta.delta;
  else if (delta.offset === held.text.length) text = held.text + delta.delta;
  else return live;
  const next = [...live];
  next[index] = { ...held, text };
  return next;
}

/** A thread's live items without one that completed. */
export function withoutItem(live: readonly LiveItem[], itemId: string): readonly LiveItem[] {
  return live.filter((entry) => entry.itemId !== itemId);
}
