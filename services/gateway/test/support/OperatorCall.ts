import type { AdminCall } from "../../src/domain/OperatorActions.js"

/** An operator as the CLI calls, for the cases that act through the use cases themselves. */
export const TestOperatorCall: AdminCall = { subject: "operator:tests", ip: "127.0.0.1", userAgent: "" }
