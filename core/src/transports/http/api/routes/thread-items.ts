import { z } from "zod";
import { threadReference } from "../../../../contract/fields.js";
import { ItemPartPage, ItemPartQuery } from "../../../../contract/read-thread-item.js";
import { ApiFailure } from "../api-errors.js";
import { defineRoute } from "../api-route.js";

const ItemPath = z.object({ threadId: threadReference("The thread"), itemId: z.string().min(1) }).strict();

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
  handle: async (input, { services }) => {
    const page = await services.queries.readItemPart(input);
    if (page === null)
      throw new ApiFailure("not_found", `Thread ${input.threadId} has no item ${input.itemId}.`, {
        threadId: input.threadId,
        itemId: input.itemId,
      });
    return page;
  },
});
