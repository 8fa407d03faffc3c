/** The longest default title, in characters (a sidebar row shows about this much). */
const TITLE_LIMIT = 60;

/** Words people open a request with that say nothing about it ("Please", "Can you", "I want you to"). */
const LEAD_IN =
  /^(?:(?:please|pls|hey|hi|hello|ok|okay|so|now|alright)\b[,!:]?\s*|(?:can|could|would|will) you\s+(?:please\s+)?|i(?:'d| would)? (?:want|need|like) you to\s+|your task is to\s+|you are to\s+)/i;

/** Markdown a title does not need: list and quote markers, emphasis, code ticks, links. */
function plainText(line: string): string {
  return line
    .replace(/^(?:[-*+>]|\d+[.)])\s+/, "")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[*_`]+/g, "")
    .replace(/\s+/g, " ")
    .trim();
}

/**
 * A default title from a thread's first message, when nobody gave one: the request itself in
 * a few words, not the prompt's raw first line. Code blocks, tags and markdown go; a heading
 * line is passed over for the first line of prose; a leading slash and the polite
 * opening ("Please", "Can you") go; the first sentence is kept, cut at a word to 60 characters.
 */
export function titleFromMessage(text: string | null): string {
  if (text === null || text.trim() === "") return "New thread";
  // The opening is all a title needs; the bound keeps the patterns' work small on a huge prompt.
  const prose = text
    .slice(0, 4_000)
    .replace(/```[\s\S]*?(?:```|$)/g, "\n")
    .replace(/<\/?[A-Za-z][^<>]*>/g, " ");
  const lines = prose
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
  const first = lines.find((line) => !line.startsWith("#")) ?? lines[0]?.replace(/^#+\s*/, "");
  let title = plainText(first ?? "");
  // A slash command names what to do ("/review the diff"): the slash goes, the word stays.
  title = title.replace(/^\/(?=\w)/, "");
  for (let previous = ""; previous !== title;) {
    previous = title;
    title = title.replace(LEAD_IN, "");
  }
  title = title.split(/(?<=[^.!?\s][.!?])\s/)[0]!.replace(/[.!?]+$/, "");
  if (title === "") return fallbackTitle(text);
  title = title.charAt(0).toUpperCase() + title.slice(1);
  if (title.length <= TITLE_LIMIT) return title;
  const cut = title.slice(0, TITLE_LIMIT - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > TITLE_LIMIT / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:-]+$/, "")}…`;
}

/** The message's first line, shortened: when nothing in it reads as prose (only code, say). */
function fallbackTitle(text: string): string {
  const firstLine = text.trim().split("\n")[0]!.replace(/\s+/g, " ");
  return firstLine.length > TITLE_LIMIT ? `${firstLine.slice(0, TITLE_LIMIT - 1)}…` : firstLine;
}
