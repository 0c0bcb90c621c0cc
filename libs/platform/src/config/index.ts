export * from "./Settings.js"
export * from "./Ports.js"
export * from "./Deployment.js"
