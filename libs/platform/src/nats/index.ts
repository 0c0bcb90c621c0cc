export * from "./Nats.js"
export * from "./DurableConsumer.js"
export * from "./Outbox.js"
