export { runDemo, type DemoOptions } from "./run-demo.js";
