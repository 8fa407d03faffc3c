/** pino's numeric levels, as people read them. */
const LEVEL_NAMES: Readonly<Record<number, string>> = {
  10: "TRACE",
  20: "DEBUG",
  30: "INFO",
  40: "WARN",
  50: "ERROR",
  60: "FATAL",
};
const LEVEL_COLORS: Readonly<Record<number, number>> = { 10: 2, 20: 2, 30: 32, 40: 33, 50: 31, 60: 31 };

/** Fields every line has that the pretty form shows in its own way, or not at all. */
const SHOWN_APART = new Set(["level", "time", "msg", "pid", "hostname", "service", "component"]);

function formatValue(value: unknown): string {
  if (typeof value === "string") return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  // Objects (errors included: pino serialises their stack into one string) stay on the line.
  return JSON.stringify(value) ?? String(value);
}

function clock(time: unknown): string {
  const date = new Date(typeof time === "number" ? time : Date.now());
  const pad = (n: number, width = 2) => String(n).padStart(width, "0");
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}

/**
 * Turns one pino JSON line into one line for a person at a terminal:
 * `14:02:07.412 INFO  [mcp] server listening url=http://127.0.0.1:7410`. A line that is not
 * JSON passes through unchanged.
 */
export function prettyLogLine(jsonLine: string, color: boolean): string {
  let event: Record<string, unknown>;
  try {
    event = JSON.parse(jsonLine) as Record<string, unknown>;
  } catch {
    return jsonLine;
  }
  const level = typeof event.level === "number" ? event.level : 30;
  const paint = (text: string, code: number) => (color ? `\u001b[${code}m${text}\u001b[0m` : text);
  const name = (LEVEL_NAMES[level] ?? String(level)).padEnd(5);
  const parts = [paint(clock(event.time), 2), paint(name, LEVEL_COLORS[level] ?? 0)];
  if (typeof event.component === "string") parts.push(paint(`[${event.component}]`, 2));
  parts.push(typeof event.msg === "string" ? event.msg : "");
  for (const [key, value] of Object.entries(event)) {
    if (SHOWN_APART.has(key) || value === undefined) continue;
    parts.push(`${paint(key, 2)}=${formatValue(value)}`);
  }
  return `${parts.join(" ")}\n`;
}
