import type { ProjectService } from "../../../services/project-service.js";
import type { McpToolServices } from "../../mcp/tool-services.js";
import type { EventStreams } from "../events/event-stream.js";

/** The services API routes call: the same ones the MCP tools use, projects, and the event streams. */
export interface ApiServices extends McpToolServices {
  readonly projects: ProjectService;
  readonly eventStreams: EventStreams;
}
