export * from "./Supervision.js"
export * from "./ReleasedMemory.js"
