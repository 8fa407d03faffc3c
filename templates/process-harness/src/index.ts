import { z } from "zod";
import { defineDriver, definePlugin } from "@switchyard/sdk";
import { createTemplateAdapter, type TemplateOptions } from "./template-adapter.js";
import { TEMPLATE_CAPABILITIES } from "./template-capabilities.js";

export { BUNDLED_HARNESS, createTemplateAdapter, harnessCommand, type TemplateOptions } from "./template-adapter.js";
export { TEMPLATE_CAPABILITIES } from "./template-capabilities.js";
export * from "./template-wire.js";

/** The driver options; the host validates a config entry with it before `create` runs. */
export const templateOptionsSchema = z
  .object({
    /** The harness executable (default: the bundled stand-in, run with the host's Node). */
    command: z.string().min(1).optional(),
    /** Its arguments. */
    args: z.array(z.string()).default([]),
    /** Models to advertise. */
    models: z.array(z.string().min(1)).default(["template-echo"]),
  })
  .strict();

/** The `template` driver: a harness process spoken to over JSON-RPC on stdio. */
export const templateDriver = defineDriver<TemplateOptions>({
  driverKind: "template",
  displayName: "Template (process harness)",
  optionsSchema: templateOptionsSchema,
  capabilities: TEMPLATE_CAPABILITIES,
  create: ({ instance, options, context }) => createTemplateAdapter(instance, options, context),
});

export default definePlugin({ drivers: [templateDriver] });
