import { HttpApi } from "effect/http-api"
import { ApplicationsGroup, FunctionsGroup, Problems } from "@portfolio/domain"

/**
 * The part of the public contract this service answers: the groups whose `Upstream` is the
 * referential, at the very paths the gateway forwards unchanged.
 */
export class ReferentialPublicApi extends HttpApi.make("referential")
  .add(ApplicationsGroup)
  .add(FunctionsGroup)
  .middleware(Problems) {}
