export { runDemo, type DemoOptions } from "./run-demo.js";
export { DEFAULT_DEMO_PAIR, DEMO_DRIVERS, parseDemoPair, type DemoPair } from "./demo-pair.js";
