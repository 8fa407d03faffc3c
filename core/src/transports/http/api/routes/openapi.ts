import { z } from "zod";
import { defineRoute } from "../api-route.js";

/**
 * The document itself is public: it describes the operations and how to authenticate, and holds
 * no state, so a client (or a generator) can read it before it has a token.
 */
export const openApiRoute = defineRoute({
  method: "GET",
  path: "/openapi.json",
  operationId: "getOpenApiDocument",
  summary: "This API's OpenAPI 3.1 document",
  tag: "meta",
  requires: null,
  input: z.object({}).strict(),
  output: z.record(z.string(), z.unknown()),
  outputName: "OpenApiDocument",
  handle: (_input, { document }) => document(),
});
