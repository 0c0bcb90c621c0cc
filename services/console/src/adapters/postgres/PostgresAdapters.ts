import { Layer } from "effect"
import { SecurityLogPg } from "./SecurityLogPg.js"
import { SessionStorePg } from "./SessionStorePg.js"
import { SignInAttemptsPg } from "./SignInAttemptsPg.js"

/** Every port the console keeps in its own schema. */
export const PostgresAdapters = Layer.mergeAll(SessionStorePg, SignInAttemptsPg, SecurityLogPg)
