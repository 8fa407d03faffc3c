import type { ProjectService } from "../../../services/project-service.js";
import type { McpToolServices } from "../../mcp/tool-services.js";

/** The services API routes call: the same ones the MCP tools use, and projects. */
export interface ApiServices extends McpToolServices {
  readonly projects: ProjectService;
}
