import { Layer } from "effect"
import { SecurityLogPg } from "@portfolio/platform/security"
import { SessionRepositoryPg } from "./SessionRepositoryPg.js"
import { SignInAttemptsPg } from "./SignInAttemptsPg.js"

/** Every port the console keeps in its own schema. */
export const PgAdaptersLive = Layer.mergeAll(SessionRepositoryPg, SignInAttemptsPg, SecurityLogPg("console"))
