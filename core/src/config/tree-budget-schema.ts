import { z } from "zod";

/**
 * What a delegation tree may use: tokens (input, cache read and write, output), US dollars
 * (reported or estimated cost) and wall-clock milliseconds. An absent limit is no limit.
 */
export const TreeBudgetSchema = z
  .object({
    tokens: z.number().int().positive().optional(),
    costUsd: z.number().positive().optional(),
    wallClockMs: z
      .number()
      .int()
      .min(1_000)
      .max(7 * 24 * 60 * 60 * 1000)
      .optional(),
  })
  .strict();
