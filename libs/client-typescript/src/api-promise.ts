import { PortfolioError, type RateLimit } from "./errors.js"

/** A result with the HTTP answer it came from. */
export interface ApiResponse<T> {
  data: T
  /** The HTTP answer; its body has already been read into `data`. */
  response: Response
  /** `X-RateLimit-Limit`, `-Remaining` and `-Reset`, or `null` when the answer lacked them. */
  rateLimit: RateLimit | null
  /** `X-Request-Id`, to quote when reporting a problem. */
  requestId: string | null
}

/**
 * What every method returns: a promise of the result that can also give the HTTP answer with
 * `.withResponse()`. The request starts when the method is called.
 */
export class ApiPromise<T> extends Promise<T> {
  readonly #response: Promise<ApiResponse<T>>
  #data: Promise<T> | undefined

  constructor(response: Promise<ApiResponse<T>>) {
    // The base promise is never observed: then, catch and finally below read `response` instead,
    // so that a failed request rejects only the promises somebody awaits.
    super((resolve) => resolve(undefined as T))
    this.#response = response
  }

  /** The result with its HTTP answer, rate-limit headers and request id. */
  withResponse(): Promise<ApiResponse<T>> {
    return this.#response
  }

  override then<R1 = T, R2 = never>(
    onfulfilled?: ((value: T) => R1 | PromiseLike<R1>) | null,
    onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null
  ): Promise<R1 | R2> {
    return this.#result().then(onfulfilled, onrejected)
  }

  override catch<R = never>(onrejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<T | R> {
    return this.#result().catch(onrejected)
  }

  override finally(onfinally?: (() => void) | null): Promise<T> {
    return this.#result().finally(onfinally)
  }

  #result(): Promise<T> {
    this.#data ??= this.#response.then((answer) => answer.data)
    return this.#data
  }
}

/** Loads the page at an absolute URL. */
export type PageLoader<Item> = (url: string) => Promise<ApiResponse<Array<Item>>>

/**
 * The promise of a list: awaited, it gives the first (or only) page; iterated with `for await`, it
 * gives every item of every page, following the `Link: <...>; rel="next"` headers.
 */
export class PagePromise<Item> extends ApiPromise<Array<Item>> implements AsyncIterable<Item> {
  readonly #url: Promise<string>
  readonly #load: PageLoader<Item>

  /** `url`: the first page's; `load` fetches it and each next one. */
  constructor(url: Promise<string>, load: PageLoader<Item>) {
    super(url.then(load))
    this.#url = url
    this.#load = load
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Item, void, undefined> {
    let page = await this.withResponse()
    let url = await this.#url
    // A link back to a page already read would loop for ever, sending requests all along.
    const read = new Set([url])
    for (;;) {
      yield* page.data
      const next = nextPageUrl(page.response.headers.get("link"), url)
      if (next === null) return
      if (read.has(next)) throw new PortfolioError(`The next-page link of ${url} leads back to a page already read: ${next}`)
      read.add(next)
      url = next
      page = await this.#load(url)
    }
  }
}

/** One link-value of RFC 8288: `<target>` then its `; name=value` parameters, each value quoted or not. */
const LINK = /<([^>]*)>((?:\s*;\s*[^;,=\s]+\s*(?:=\s*(?:"[^"]*"|[^;,]*))?)*)/g
const PARAMETER = /;\s*([^;,=\s]+)\s*(?:=\s*(?:"([^"]*)"|([^;,]*)))?/g

/**
 * The target of the `rel="next"` link of a `Link` header (RFC 8288), resolved against the request's
 * URL. Parameters are read whole, so that a quoted value holding `; rel=next` is not taken for one.
 */
export const nextPageUrl = (link: string | null, requestUrl: string): string | null => {
  if (link === null) return null
  for (const [, target, params] of link.matchAll(LINK)) {
    for (const [, name, quoted, bare] of (params ?? "").matchAll(PARAMETER)) {
      const relations = (quoted ?? bare ?? "").trim().toLowerCase().split(/\s+/)
      if (name!.toLowerCase() === "rel" && relations.includes("next")) {
        try {
          return new URL(target!.trim(), requestUrl).href
        } catch (cause) {
          throw new PortfolioError(`The next-page link is not a URL reference: ${target}`, { cause })
        }
      }
    }
  }
  return null
}
