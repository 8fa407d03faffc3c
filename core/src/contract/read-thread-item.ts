import { z } from "zod";
import { ITEM_PART_PAGE_CHARS } from "../services/thread-query-service.js";

/** readThreadItem (HTTP API): one timeline item's text, output or arguments, a page at a time. */
export const ItemPartQuery = z
  .object({
    part: z
      .enum(["text", "output", "input", "transcript"])
      .optional()
      .describe(
        "text (default): the item's text; output: a tool call's output; input: a tool call's arguments as indented JSON; transcript: a provider-native sub-agent's kept transcript, one `role: text` paragraph a message.",
      ),
    offset: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe("Where the page starts, in characters (default 0); pass nextOffset to read on."),
    limit: z
      .number()
      .int()
      .min(1)
      .max(ITEM_PART_PAGE_CHARS)
      .optional()
      .describe(`Characters in the page (default and most ${ITEM_PART_PAGE_CHARS}).`),
  })
  .strict();

export const ItemPartPage = z.object({
  threadId: z.string(),
  itemId: z.string(),
  kind: z.string(),
  status: z.string(),
  part: z.enum(["text", "output", "input", "transcript"]),
  offset: z.number().int(),
  text: z.string().describe("This page of the part (empty when the item has no such part)."),
  totalChars: z.number().int().describe("The whole part's length."),
  nextOffset: z.number().int().nullable().describe("Pass as offset to read the next page; null at the end."),
});
