import { definePlugin } from "@switchyard/sdk";
import { createTemplateDriver } from "./template-adapter.js";

export {
  createTemplateDriver,
  templateFlavor,
  templateOptionsSchema,
  type TemplateOptions,
} from "./template-adapter.js";
export { TEMPLATE_CAPABILITIES } from "./template-capabilities.js";
export { TEMPLATE_EXTENSIONS } from "./template-extensions.js";
export * from "./template-wire.js";

export default definePlugin({ drivers: [createTemplateDriver()] });
