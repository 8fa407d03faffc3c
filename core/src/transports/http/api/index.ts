import type { ApiRoute } from "./api-route.js";
import { applyChangesRoute, discardChangesRoute, listWorkspacesRoute, readChangesRoute } from "./routes/changes.js";
import { eventsRoute } from "./routes/events.js";
import { openApiRoute } from "./routes/openapi.js";
import {
  listPendingRequestsRoute,
  readPendingRequestRoute,
  respondToPendingRequestRoute,
} from "./routes/pending-requests.js";
import { listProfilesRoute } from "./routes/profiles.js";
import { addProjectRoute, listProjectsRoute } from "./routes/projects.js";
import { listProvidersRoute, providerDoctorRoute } from "./routes/providers.js";
import {
  createScheduledTaskRoute,
  deleteScheduledTaskRoute,
  listScheduledTasksRoute,
  readScheduledTaskRoute,
  updateScheduledTaskRoute,
} from "./routes/scheduled-tasks.js";
import { cancelTaskRoute, getTaskRoute } from "./routes/tasks.js";
import { listRemoteTasksRoute } from "./routes/remote-tasks.js";
import {
  interruptThreadRoute,
  resumeThreadRoute,
  sendMessageRoute,
  setThreadSettledRoute,
  stopThreadRoute,
  waitForRunRoute,
} from "./routes/thread-actions.js";
import { forkThreadRoute } from "./routes/thread-fork.js";
import { snoozeThreadRoute, unsnoozeThreadRoute } from "./routes/thread-snooze.js";
import { updateThreadRoute } from "./routes/thread-update.js";
import { readThreadItemRoute } from "./routes/thread-items.js";
import { createThreadsRoute, listThreadsRoute, readThreadRoute, searchThreadsRoute } from "./routes/threads.js";
import { usageRoute } from "./routes/usage.js";
import { listAuditRoute } from "./routes/audit.js";
import { readSessionRoute, signInRoute, signOutRoute } from "./routes/web-session.js";

export { API_PREFIX, ApiRouter } from "./api-router.js";
export { defineRoute, type ApiContext, type ApiRoute } from "./api-route.js";
export type { ApiServices } from "./api-services.js";
export { ApiFailure, FAILURE_STATUS, HTTP_FAILURE_CODES } from "./api-errors.js";

/**
 * The API's operations, in the order the OpenAPI document lists them. A route in its own file
 * is added here (or registered on a running server with `server.api.register`).
 */
export const API_ROUTES: readonly ApiRoute[] = [
  listProjectsRoute,
  addProjectRoute,
  listThreadsRoute,
  // Before readThread: /threads/search would otherwise read as a thread named "search".
  searchThreadsRoute,
  createThreadsRoute,
  readThreadRoute,
  readThreadItemRoute,
  sendMessageRoute,
  waitForRunRoute,
  interruptThreadRoute,
  stopThreadRoute,
  resumeThreadRoute,
  setThreadSettledRoute,
  snoozeThreadRoute,
  unsnoozeThreadRoute,
  updateThreadRoute,
  forkThreadRoute,
  readChangesRoute,
  applyChangesRoute,
  discardChangesRoute,
  listWorkspacesRoute,
  getTaskRoute,
  cancelTaskRoute,
  listRemoteTasksRoute,
  listPendingRequestsRoute,
  readPendingRequestRoute,
  respondToPendingRequestRoute,
  listScheduledTasksRoute,
  createScheduledTaskRoute,
  readScheduledTaskRoute,
  updateScheduledTaskRoute,
  deleteScheduledTaskRoute,
  listProvidersRoute,
  providerDoctorRoute,
  listProfilesRoute,
  usageRoute,
  listAuditRoute,
  eventsRoute,
  signInRoute,
  readSessionRoute,
  signOutRoute,
  openApiRoute,
] as unknown as readonly ApiRoute[];
