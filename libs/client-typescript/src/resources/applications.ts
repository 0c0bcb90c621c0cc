import type { ApiPromise, PagePromise } from "../api-promise.js"
import type { RequestOptions, Transport } from "../transport.js"
import type { Application, ApplicationListParams, ChangeLogEntry, PageParams } from "../types.js"

/** The applications of the tenant's referential. */
export class Applications {
  readonly #transport: Transport

  /** @internal Reached through `PortfolioClient.applications`. */
  constructor(transport: Transport) {
    this.#transport = transport
  }

  /**
   * `GET /referentiel/applications`: the applications matching every given filter, sorted by code.
   * `status` defaults to `ACTIVE`. Await it for the list (one page when `limit` or `cursor` is
   * given), or iterate it with `for await` for every item of every page.
   */
  list(params: ApplicationListParams = {}, options?: RequestOptions): PagePromise<Application> {
    return this.#transport.list(
      "applications.listApplications",
      {
        query: {
          data_class: params.dataClass,
          criticality: params.criticality,
          regulation: params.regulation,
          status: params.status ?? "ACTIVE",
          limit: params.limit,
          cursor: params.cursor
        }
      },
      options
    )
  }

  /** `GET /referentiel/applications/{code}`: one application; `NotFoundError` when the tenant has none of that code. */
  get(code: string, options?: RequestOptions): ApiPromise<Application> {
    return this.#transport.request("applications.getApplication", { path: { code } }, options)
  }

  /** `GET /referentiel/applications/{code}/changes`: the change log of the audited fields, newest first (50 by default, 200 at most a page). */
  changes(code: string, params: PageParams = {}, options?: RequestOptions): PagePromise<ChangeLogEntry> {
    return this.#transport.list(
      "applications.listApplicationChanges",
      { path: { code }, query: { limit: params.limit, cursor: params.cursor } },
      options
    )
  }
}
