export * from "./Database.js"
export * from "./Migrations.js"
export * from "./UnitOfWork.js"
export * from "./Retention.js"
