import type { SchedulingConfig } from "../../config/config-schema.js";
import type { CommandContext } from "../../engine/command-context.js";

/**
 * A webhook task's rate limit, read from its own triggers inside the transaction that would
 * record the next one: at most `requests` triggers within `windowMs`. The count is the store's,
 * so it holds across restarts and for every server on one database, and a request it refuses
 * writes nothing. Returns null when the request may be recorded, else how long to wait: until
 * the oldest trigger in the window leaves it.
 */
export async function webhookRateCheck(
  ctx: CommandContext,
  taskId: string,
  limit: SchedulingConfig["webhookRateLimit"],
): Promise<{ readonly retryAfterSeconds: number; readonly message: string } | null> {
  const since = new Date(ctx.nowMs - limit.windowMs).toISOString();
  const inWindow = await ctx.count("scheduledTrigger", "task_id = ? AND created_at > ?", [taskId, since]);
  if (inWindow < limit.requests) return null;
  // The trigger whose leaving the window frees a place for this request.
  const freeing = (
    await ctx.select(
      "scheduledTrigger",
      "task_id = ? AND created_at > ?",
      [taskId, since],
      `ORDER BY created_at LIMIT 1 OFFSET ${inWindow - limit.requests}`,
    )
  )[0];
  const waitMs = freeing === undefined ? limit.windowMs : Date.parse(freeing.createdAt) + limit.windowMs - ctx.nowMs;
  const retryAfterSeconds = Math.max(1, Math.ceil(waitMs / 1000));
  return {
    retryAfterSeconds,
    message: `This task took ${inWindow} requests within the last ${Math.round(limit.windowMs / 1000)} s, its limit (scheduling.webhookRateLimit: ${limit.requests} per ${Math.round(limit.windowMs / 1000)} s); nothing was recorded. Send it again in ${retryAfterSeconds} s.`,
  };
}
