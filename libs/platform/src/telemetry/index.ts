export * from "./Telemetry.js"
export * from "./TraceContext.js"
export * from "./Metrics.js"
export { jsonLogger, logfmtLogger, prettyLogger } from "./LogFormat.js"
