import { HttpApiScalar, HttpLayerRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { type ErrorCode, ProblemCatalog, PublicApiPrefix } from "@portfolio/domain"
import { documentedPublicApi, publicOpenApiDocument } from "@portfolio/domain/OpenApiDocument"
import { ProblemExplanations } from "@portfolio/domain/ProblemExplanations"
import { escapeHtml } from "@portfolio/platform"
import { Effect, type Scope } from "effect"
import { createHash } from "node:crypto"
import { GatewayConfig } from "../../Config.js"
import { parseRequestTarget } from "./ClientRequest.js"

/** A CSP source admitting exactly this inline script or style. */
const hashSource = (text: string) => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`

const lockedDown = "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/**
 * Every HTML page: its content policy, never framed (clickjacking), never sniffed as anything
 * else, and no referrer (a page URL may one day carry what another site must not see).
 */
const htmlHeaders = (policy: string) => ({
  "content-security-policy": policy,
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer"
})

/**
 * The reference's own inline scripts (its configuration and the bundled Scalar) by hash: no other
 * script runs. Scalar injects its styles at run time, hence inline styles. `connect-src 'self'`:
 * "try it" calls the API on this origin (the document's `servers` URL), so a token typed into it
 * goes nowhere else, not even to Scalar's proxy. Its data blocks (`type="application/json"`) do
 * not run and need no hash.
 */
const referencePolicy = (html: string) =>
  [
    "default-src 'self'",
    `script-src ${[...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => hashSource(m[1]!)).join(" ")}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    lockedDown
  ].join("; ")

/** Inline code spans of the explanations, rendered after escaping. */
const withCode = (text: string) => escapeHtml(text).replace(/`([^`]+)`/g, "<code>$1</code>")

const stylesheet =
  "body{font-family:system-ui,sans-serif;max-width:46rem;margin:3rem auto;padding:0 1rem;line-height:1.5;color:#1b1f24}code{background:#eef1f4;padding:0 .25rem;border-radius:3px}table{border-collapse:collapse}td,th{border:1px solid #d0d7de;padding:.3rem .6rem;text-align:left}"

/** The error pages: their one stylesheet, nothing else. */
const pagePolicy = `default-src 'none'; style-src ${hashSource(stylesheet)}; ${lockedDown}`

const page = (title: string, body: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8" />
<meta name="viewport" content="width=device-width, initial-scale=1" />
<title>${escapeHtml(title)}</title>
<style>${stylesheet}</style>
</head>
<body>
${body}
</body>
</html>`

const errorPage = (code: ErrorCode, baseUrl: string) => {
  const row = ProblemCatalog[code]
  return page(
    `${row.title} (${code})`,
    `<h1>${escapeHtml(row.title)}</h1>
<table>
<tr><th>HTTP status</th><td>${row.status}</td></tr>
<tr><th><code>errorCode</code></th><td><code>${code}</code></td></tr>
<tr><th><code>type</code> slug</th><td><code>${row.slug}</code></td></tr>
</table>
<p>${withCode(ProblemExplanations[code])}</p>
<p>Error bodies are <code>application/problem+json</code> (RFC 9457) with <code>type</code>, <code>title</code>, <code>status</code>,
<code>detail</code>, <code>instance</code> and <code>errorCode</code>. Compare <code>errorCode</code>, never the title.</p>
<p><a href="${escapeHtml(baseUrl)}/errors">All error codes</a> · <a href="${escapeHtml(baseUrl)}/docs">API reference</a></p>`
  )
}

const errorIndex = (baseUrl: string) =>
  page(
    "Error codes",
    `<h1>Error codes</h1>
<table>
<tr><th>Status</th><th>errorCode</th><th>Title</th></tr>
${
      Object.entries(ProblemCatalog).map(([code, row]) =>
        `<tr><td>${row.status}</td><td><a href="${escapeHtml(baseUrl)}/errors/${row.slug}"><code>${code}</code></a></td><td>${escapeHtml(row.title)}</td></tr>`
      ).join("\n")
    }
</table>`
  )

/** Whether a request asks for a documentation page (or an unknown error page), which needs no token; HEAD as GET. */
export const isDocumentationRequest = (method: string, path: string): boolean => {
  if ((method !== "GET" && method !== "HEAD") || !path.startsWith(PublicApiPrefix)) return false
  const relativePath = path.slice(PublicApiPrefix.length)
  return relativePath === "/openapi.json" || relativePath === "/docs" || relativePath === "/errors" || relativePath.startsWith("/errors/")
}

/**
 * The route template of a documentation request, for its record: one per kind of page, whatever
 * the error slug (an invented one included: the series stay few). `undefined` outside the pages.
 */
export const documentationRoute = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const path = parseRequestTarget(request.url)?.path
  if (path === undefined || !isDocumentationRequest(request.method, path)) return undefined
  return path.startsWith(`${PublicApiPrefix}/errors/`) ? `${PublicApiPrefix}/errors/{slug}` : path
}

/** The page the reference's router answers, read once: it is the same for every request. */
const renderReference = <E>(router: Effect.Effect<HttpServerResponse.HttpServerResponse, E, HttpServerRequest.HttpServerRequest | Scope.Scope>, path: string) =>
  Effect.gen(function*() {
    const response = yield* router.pipe(
      Effect.provideService(HttpServerRequest.HttpServerRequest, HttpServerRequest.fromWeb(new Request(`http://gateway.invalid${path}`))),
      Effect.scoped,
      Effect.orDie
    )
    if (response.body._tag !== "Uint8Array") return yield* Effect.dieMessage("the API reference is no longer rendered as one HTML body")
    const html = new TextDecoder().decode(response.body.body)
    return HttpServerResponse.setHeaders(response, htmlHeaders(referencePolicy(html)))
  })

/**
 * The pages under the public prefix that need no token: the OpenAPI document, the interactive
 * reference (Scalar, its script bundled, no CDN) and one page per error slug. All are built once
 * at start-up; `find` answers the page of a path relative to the prefix, if there is one.
 */
export const makeDocsPages = Effect.gen(function*() {
  const config = yield* GatewayConfig
  const options = {
    baseUrl: config.publicBaseUrl,
    rateLimitPerMinute: config.rateLimit.perToken,
    anonymousRateLimitPerMinute: config.rateLimit.perAnonymousIp,
    partnerRateLimitPerMinute: config.rateLimit.perPartner
  }
  const openApi = HttpServerResponse.text(JSON.stringify(publicOpenApiDocument(options)), {
    contentType: "application/json",
    headers: { "x-content-type-options": "nosniff" }
  })
  const docsPath = `${PublicApiPrefix}/docs` as const
  const reference = yield* renderReference(
    yield* HttpLayerRouter.toHttpEffect(
      HttpApiScalar.layerHttpLayerRouter({ api: documentedPublicApi(options), path: docsPath, scalar: { hideModels: false } })
    ),
    docsPath
  )
  const htmlPage = (html: string) => HttpServerResponse.setHeaders(HttpServerResponse.html(html), htmlHeaders(pagePolicy))
  const errorPages = new Map<string, HttpServerResponse.HttpServerResponse>(
    Object.entries(ProblemCatalog).map(([code, row]) => [row.slug, htmlPage(errorPage(code as ErrorCode, config.publicBaseUrl))])
  )
  const index = htmlPage(errorIndex(config.publicBaseUrl))

  /** `undefined` when the path is not a documentation page; `null` for an unknown error slug. */
  const find = (relativePath: string) => {
    if (relativePath === "/openapi.json") return Effect.succeed(openApi)
    if (relativePath === "/docs") return Effect.succeed(reference)
    if (relativePath === "/errors") return Effect.succeed(index)
    if (relativePath.startsWith("/errors/")) {
      const known = errorPages.get(relativePath.slice("/errors/".length))
      return known === undefined ? null : Effect.succeed(known)
    }
    return undefined
  }
  return { find }
})
