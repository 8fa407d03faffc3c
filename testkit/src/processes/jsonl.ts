export { LineSplitter } from "@switchyard/sdk";

/** Parses JSONL text into values, skipping blank and non-JSON lines (harnesses print warnings too). */
export function parseJsonLines(text: string): unknown[] {
  const values: unknown[] = [];
  for (const line of text.split("\n")) {
    const trimmed = line.trim();
    if (!trimmed.startsWith("{") && !trimmed.startsWith("[")) continue;
    try {
      values.push(JSON.parse(trimmed));
    } catch {
      // a non-JSON line that happens to start with a brace
    }
  }
  return values;
}
