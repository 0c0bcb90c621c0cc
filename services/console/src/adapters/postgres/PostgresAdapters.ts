import { Layer } from "effect"
import { securityLogPg } from "@portfolio/platform"
import { SessionStorePg } from "./SessionStorePg.js"
import { SignInAttemptsPg } from "./SignInAttemptsPg.js"

/** Every port the console keeps in its own schema. */
export const PostgresAdapters = Layer.mergeAll(SessionStorePg, SignInAttemptsPg, securityLogPg("console"))
