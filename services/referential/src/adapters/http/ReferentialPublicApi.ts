import { HttpApi } from "@effect/platform"
import { ApplicationsGroup, asProblem, FunctionsGroup, InvalidRequest } from "@portfolio/domain"

/**
 * The part of the public contract this service answers: the groups whose `Upstream` is the
 * referential, at the very paths the gateway forwards unchanged.
 */
export class ReferentialPublicApi extends HttpApi.make("referential")
  .add(ApplicationsGroup)
  .add(FunctionsGroup)
  .addError(asProblem(InvalidRequest)) {}
