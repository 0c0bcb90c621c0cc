import { UnitOfWorkPg } from "@portfolio/platform"
import { Layer } from "effect"
import { DeliveryRepositoryPg } from "./DeliveryRepositoryPg.js"
import { DispatcherEventsPg } from "./DispatcherEventsPg.js"
import { SubscriptionRepositoryPg } from "./SubscriptionRepositoryPg.js"

/** Every port the dispatcher keeps in PostgreSQL. */
export const PostgresAdapters = Layer.mergeAll(SubscriptionRepositoryPg, DeliveryRepositoryPg, DispatcherEventsPg, UnitOfWorkPg)
