import type { ApiPromise, PagePromise } from "../api-promise.js"
import type { RequestOptions, Transport } from "../transport.js"
import type { BusinessFunction, FunctionTreeNode, PageParams, PosiTreeNode, ReferentialStats } from "../types.js"

/** The business functions of the tenant's referential. */
export class Functions {
  readonly #transport: Transport

  /** @internal Reached through `PortfolioClient.functions`. */
  constructor(transport: Transport) {
    this.#transport = transport
  }

  /** `GET /referentiel/functions`: the root functions with their descendants nested in `children`. */
  tree(options?: RequestOptions): ApiPromise<Array<FunctionTreeNode>> {
    return this.#transport.request("functions.getFunctionTree", {}, options)
  }

  /** `GET /referentiel/functions/flat`: every function once, depth first, with its `level` and `path`. */
  flat(params: PageParams = {}, options?: RequestOptions): PagePromise<BusinessFunction> {
    return this.#transport.list("functions.listFunctionsFlat", { query: { limit: params.limit, cursor: params.cursor } }, options)
  }

  /** `GET /referentiel/functions/posi`: the tree, each function with its linked applications. */
  posi(options?: RequestOptions): ApiPromise<Array<PosiTreeNode>> {
    return this.#transport.request("functions.getFunctionTreePosi", {}, options)
  }

  /** `GET /referentiel/functions/search?q=`: the functions whose code, name or description contains `query` (case-insensitive). */
  search(query: string, params: PageParams = {}, options?: RequestOptions): PagePromise<BusinessFunction> {
    return this.#transport.list("functions.searchFunctions", { query: { q: query, limit: params.limit, cursor: params.cursor } }, options)
  }

  /** `GET /referentiel/functions/stats`: counts over the functions, the applications and their links. */
  stats(options?: RequestOptions): ApiPromise<ReferentialStats> {
    return this.#transport.request("functions.getFunctionStats", {}, options)
  }

  /** `GET /referentiel/functions/by-application/{code}`: the functions linked to one application, sorted by code. */
  byApplication(code: string, params: PageParams = {}, options?: RequestOptions): PagePromise<BusinessFunction> {
    return this.#transport.list(
      "functions.listFunctionsByApplication",
      { path: { code }, query: { limit: params.limit, cursor: params.cursor } },
      options
    )
  }

  /** `GET /referentiel/functions/{id}`: one function by its UUID. */
  get(id: string, options?: RequestOptions): ApiPromise<BusinessFunction> {
    return this.#transport.request("functions.getFunction", { path: { id } }, options)
  }
}
