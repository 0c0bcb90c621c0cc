import { HttpApi, HttpApiBuilder } from "effect/http-api"
import { Cookies, FetchHttpClient, HttpClient, HttpClientRequest, HttpRouter, type HttpServerRequest, type HttpServerResponse } from "effect/http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { answerProblems, ErrorsUrl, ProblemMiddlewareLive } from "@portfolio/platform/http"
import { InternalSecret } from "@portfolio/platform/security"
import { Effect, Layer, type Types } from "effect"
import { ConsolePagesLive } from "../../src/adapters/http/ConsolePages.js"
import { SessionCookie, SignInCookie } from "../../src/adapters/http/Guards.js"
import type { ConsoleSettingsShape } from "../../src/Config.js"
import { MemoryLayer, type Person } from "./Memory.js"

class TestConsoleApi extends HttpApi.make("console") {}

/** Every failure of the router answered as problem+json, as `serveApi` answers it around the whole router. */
const AnswerProblems = Layer.effectDiscard(
  Effect.gen(function*() {
    const router = yield* HttpRouter.HttpRouter
    const context = yield* Effect.context<ErrorsUrl>()
    yield* router.addGlobalMiddleware(
      (app: Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled, HttpServerRequest.HttpServerRequest>): Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled, HttpServerRequest.HttpServerRequest> =>
        Effect.provideContext(answerProblems(app), context)
    )
  })
)

/** The console's pages as main.ts serves them, over ports in memory, on an ephemeral port. */
export const consoleServer = (people: Array<Person>, settings: Partial<ConsoleSettingsShape> = {}, internalSecret = "console-test-secret-0123456789abcdef") =>
  HttpRouter.serve(Layer.mergeAll(HttpApiBuilder.layer(TestConsoleApi).pipe(Layer.provide(ProblemMiddlewareLive)), ConsolePagesLive, AnswerProblems), {
    disableLogger: true,
    disableListenLog: true
  }).pipe(
    Layer.provideMerge(NodeHttpServer.layerTest),
    Layer.provideMerge(Layer.succeed(ErrorsUrl, "https://errors.test/api")),
    // What main.ts gives the console too: the pages must not take an assertion signed with it for a session.
    Layer.provideMerge(InternalSecret.fixed(internalSecret)),
    Layer.provideMerge(MemoryLayer(people, settings))
  )

export interface Page {
  readonly status: number
  readonly location: string | undefined
  readonly html: string
  readonly headers: Readonly<Record<string, string>>
  /** The Set-Cookie lines, as sent. */
  readonly setCookies: ReadonlyArray<string>
}

/** The hidden CSRF field of the page's first form. */
export const csrfOf = (page: Page) => /name="csrf" value="([^"]+)"/.exec(page.html)?.[1] ?? ""

/**
 * A browser as far as the console cares: a cookie jar (name=value, paths ignored: every cookie
 * here is the console's), the Origin header of same-origin forms, no redirect followed.
 */
/** The test server's client is fetch: left to itself it would follow redirects, which a test reads instead. */
const NoRedirects = { keepalive: false, redirect: "manual" } as const

export const browser = (origin = "http://console.test", headers: Readonly<Record<string, string>> = {}) => {
  const jar = new Map<string, string>()
  const send = (request: HttpClientRequest.HttpClientRequest) =>
    Effect.gen(function*() {
      const client = yield* HttpClient.HttpClient
      const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join("; ")
      const withHeaders = HttpClientRequest.setHeaders(request, headers)
      const response = yield* client.execute(cookie === "" ? withHeaders : HttpClientRequest.setHeader(withHeaders, "cookie", cookie)).pipe(
        Effect.provideService(FetchHttpClient.RequestInit, NoRedirects)
      )
      const setCookies = Cookies.toSetCookieHeaders(response.cookies)
      for (const line of setCookies) {
        const [pair, ...attributes] = line.split(";")
        const [name, value] = [pair!.slice(0, pair!.indexOf("=")), pair!.slice(pair!.indexOf("=") + 1)]
        const expired = attributes.some((a) => /max-age=0|expires=thu, 01 jan 1970/i.test(a.trim()))
        if (expired) jar.delete(name)
        else jar.set(name, value)
      }
      return {
        status: response.status,
        location: response.headers["location"],
        html: yield* response.text,
        headers: response.headers as Readonly<Record<string, string>>,
        setCookies
      } satisfies Page
    }).pipe(Effect.scoped)
  return {
    jar,
    get: (path: string) => send(HttpClientRequest.get(path)),
    post: (path: string, form: Record<string, string>, options: { readonly origin?: string | null } = {}) => {
      const request = HttpClientRequest.post(path).pipe(HttpClientRequest.bodyUrlParams(form))
      const from = options.origin === undefined ? origin : options.origin
      return send(from === null ? request : HttpClientRequest.setHeader(request, "origin", from))
    },
    /** Signs in through the form, as a person does. */
    signIn: (email: string, password: string) =>
      Effect.gen(function*() {
        const form = yield* send(HttpClientRequest.get("/console/sign-in"))
        const request = HttpClientRequest.post("/console/sign-in").pipe(
          HttpClientRequest.bodyUrlParams({ csrf: csrfOf(form), email, password }),
          HttpClientRequest.setHeader("origin", origin)
        )
        return yield* send(request)
      })
  }
}

export { SessionCookie, SignInCookie }

/** A browser signed in as `email`, the sign-in checked to have succeeded. */
export const signedIn = (email: string, password: string) =>
  Effect.gen(function*() {
    const b = browser()
    const answer = yield* b.signIn(email, password)
    if (answer.status !== 303) return yield* Effect.die(new Error(`sign-in of ${email} answered ${answer.status}`))
    return b
  })
