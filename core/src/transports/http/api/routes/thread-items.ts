import { z } from "zod";
import { ITEM_PART_PAGE_CHARS } from "../../../../services/thread-query-service.js";
import { ApiFailure } from "../api-errors.js";
import { defineRoute } from "../api-route.js";

const ItemPath = z.object({ threadId: z.string().min(1), itemId: z.string().min(1) }).strict();

const ItemPartQuery = z
  .object({
    part: z.enum(["text", "output", "input"]).optional().describe("text (default): the item's text; output: a tool call's output; input: a tool call's arguments as indented JSON."),
    offset: z.number().int().min(0).optional().describe("Where the page starts, in characters (default 0); pass nextOffset to read on."),
    limit: z.number().int().min(1).max(ITEM_PART_PAGE_CHARS).optional().describe(`Characters in the page (default and most ${ITEM_PART_PAGE_CHARS}).`),
  })
  .strict();

const ItemPartPage = z.object({
  threadId: z.string(),
  itemId: z.string(),
  kind: z.string(),
  status: z.string(),
  part: z.enum(["text", "output", "input"]),
  offset: z.number().int(),
  text: z.string().describe("This page of the part (empty when the item has no such part)."),
  totalChars: z.number().int().describe("The whole part's length."),
  nextOffset: z.number().int().nullable().describe("Pass as offset to read the next page; null at the end."),
});

export const readThreadItemRoute = defineRoute({
  method: "GET",
  path: "/threads/{threadId}/items/{itemId}",
  operationId: "readThreadItem",
  summary: "Read one timeline item's text, output or arguments whole, a page at a time",
  description:
    "What a thread read cut short (an item flagged truncated, a tool call's outputTruncated or inputPreview), read whole: part=text, output or input, from offset, at most limit characters a page; nextOffset reads on. An item id the thread does not have answers not_found.",
  tag: "threads",
  requires: "orchestration:read",
  params: ItemPath,
  query: ItemPartQuery,
  input: ItemPath.extend(ItemPartQuery.shape),
  output: ItemPartPage,
  outputName: "ThreadItemPart",
  handle: (input, { services }) => {
    const page = services.queries.readItemPart(input);
    if (page === null) throw new ApiFailure("not_found", `Thread ${input.threadId} has no item ${input.itemId}.`, { threadId: input.threadId, itemId: input.itemId });
    return page;
  },
});
