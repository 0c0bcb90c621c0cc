export * from "./Memoized.js"
export * from "./ExpiringLru.js"
