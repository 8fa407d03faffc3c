export {
  startTestHost,
  type StartTestHostOptions,
  type TestHost,
  type TestProviderInstance,
} from "./start-test-host.js";
