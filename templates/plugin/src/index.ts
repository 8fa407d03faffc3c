import { z } from "zod";
import { defineDriver, definePlugin } from "@switchyard/sdk";
import { TemplateAdapter } from "./template-adapter.js";
import { TEMPLATE_CAPABILITIES } from "./template-capabilities.js";

const OptionsSchema = z
  .object({
    /** The harness executable. */
    command: z.string().min(1),
    /** Its arguments. */
    args: z.array(z.string()).default([]),
    /** Models to advertise. */
    models: z.array(z.string()).default([]),
  })
  .strict();

/** The `template` driver: a command-line harness that answers one prompt per process. */
export const templateDriver = defineDriver<z.infer<typeof OptionsSchema>>({
  driverKind: "template",
  displayName: "Template (one prompt per process)",
  optionsSchema: OptionsSchema,
  capabilities: TEMPLATE_CAPABILITIES,
  create: ({ instance, options, context }) =>
    new TemplateAdapter(instance.id, { command: options.command, args: options.args }, context, instance.environment, [...options.models, ...instance.customModels]),
});

export default definePlugin({ drivers: [templateDriver] });
