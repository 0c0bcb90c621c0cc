export * from "./IdGenerator.js"
