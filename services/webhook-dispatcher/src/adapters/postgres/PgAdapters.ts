import { UnitOfWorkPg } from "@portfolio/platform/sql"
import { Layer } from "effect"
import { DeliveryRepositoryPg } from "./DeliveryRepositoryPg.js"
import { DispatcherOutboxPg } from "./DispatcherOutboxPg.js"
import { SubscriptionRepositoryPg } from "./SubscriptionRepositoryPg.js"

/** Every port the dispatcher keeps in PostgreSQL. */
export const PgAdaptersLive = Layer.mergeAll(SubscriptionRepositoryPg, DeliveryRepositoryPg, DispatcherOutboxPg, UnitOfWorkPg)
