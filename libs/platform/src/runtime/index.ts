export * from "./Supervision.js"
