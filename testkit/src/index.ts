export {};
export * from "./model-server/index.js";
export * from "./harness-homes/index.js";
export * from "./processes/index.js";
export * from "./acp-agent/index.js";
export * from "./scripted-provider/index.js";
export * from "./test-host/index.js";
export * from "./cursor-backend/index.js";
export * from "./session-lab/index.js";
