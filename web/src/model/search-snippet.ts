/** A piece of a search snippet: plain text, and whether it is a matched word. */
export interface SnippetPiece {
  readonly text: string;
  readonly matched: boolean;
}

/**
 * Cuts a snippet's text at its highlight ranges (as the server gives them: sorted, [start, end)
 * offsets), for rendering as text nodes and <mark>s, never as markup from the text itself.
 * Ranges out of order, overlapping or outside the text are skipped.
 */
export function snippetPieces(
  text: string,
  highlights: readonly { readonly start: number; readonly end: number }[],
): SnippetPiece[] {
  const pieces: SnippetPiece[] = [];
  let at = 0;
  for (const { start, end } of highlights) {
    if (start < at || end <= start || end > text.length) continue;
    if (start > at) pieces.push({ text: text.slice(at, start), matched: false });
    pieces.push({ text: text.slice(start, end), matched: true });
    at = end;
  }
  if (at < text.length) pieces.push({ text: text.slice(at), matched: false });
  return pieces;
}

/** Where a search matched, in the words a person reads. */
export function matchedInLabel(matchedIn: "title" | "user_message" | "assistant_message" | "proposed_plan"): string {
  switch (matchedIn) {
    case "title":
      return "in the title";
    case "user_message":
      return "in a user message";
    case "assistant_message":
      return "in an assistant message";
    case "proposed_plan":
      return "in a proposed plan";
  }
}
