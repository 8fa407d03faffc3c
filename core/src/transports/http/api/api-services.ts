import type { ProjectService } from "../../../services/project-service.js";
import type { UsageService } from "../../../services/usage/usage-service.js";
import type { McpToolServices } from "../../mcp/tool-services.js";

/** The services API routes call: the same ones the MCP tools use, projects and usage. */
export interface ApiServices extends McpToolServices {
  readonly projects: ProjectService;
  readonly usage: UsageService;
}
