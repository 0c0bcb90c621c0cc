import { OpenApi } from "effect/http-api"
import { type HttpServerRequest, HttpServerResponse } from "effect/http"
import { type ErrorCode, ProblemCatalog, PublicApiPrefix } from "@portfolio/domain"
import { documentedPublicApi } from "@portfolio/domain/OpenApiDocument"
import { ProblemExplanations } from "@portfolio/domain/ProblemExplanations"
import { escapeHtml } from "@portfolio/platform/http"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { GatewaySettings } from "../../Config.js"
import { parseRequestTarget } from "./ClientRequest.js"
import { makeReferenceScript } from "./ReferenceScript.js"

/** Scalar's script, under the public prefix: the reference page loads it from this origin. */
const ReferenceScriptPath = "/docs/api-reference.js"

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
 * The reference's script from this origin (ReferenceScript.ts) and its one inline script, its
 * configuration, by hash: no other script runs. `'wasm-unsafe-eval'` lets Scalar compile the
 * WebAssembly module it loads the document with (without it the reference never leaves its
 * skeleton); it allows no JavaScript `eval`. Scalar injects its styles at run time, hence inline
 * styles; its default fonts, from Scalar's own host, are turned off (`withDefaultFonts`). `connect-src 'self'`: "try it" calls the API on this origin (the document's
 * `servers` URL), so a token typed into it goes nowhere else, not even to Scalar's proxy. Its data
 * block (`type="application/json"`) does not run and needs no hash.
 */
const referencePolicy = (html: string) =>
  [
    "default-src 'self'",
    `script-src 'self' 'wasm-unsafe-eval' ${[...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => hashSource(m[1]!)).join(" ")}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    lockedDown
  ].join("; ")

/** JSON inside a `<script>` block: nothing in it may close the block or end a line of script. */
const scriptJson = (value: unknown) =>
  JSON.stringify(value).replace(/</g, "\\u003c").replace(/[\u2028\u2029]/g, (c) => (c === "\u2028" ? "\\u2028" : "\\u2029"))

/**
 * The interactive reference: the OpenAPI document of the public API as a data block, Scalar's
 * configuration, and Scalar's script from `scriptPath` (the page Scalar's own integration makes,
 * its script a file of its own rather than inline).
 */
const referencePage = (document: OpenApi.OpenAPISpec, scriptPath: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8" />
<meta name="viewport" content="width=device-width, initial-scale=1" />
<title>${escapeHtml(document.info.title)}</title>
</head>
<body>
<script id="api-reference" type="application/json">${scriptJson(document)}</script>
<script>document.getElementById("api-reference").dataset.configuration = JSON.stringify(${scriptJson({ _integration: "html", hideModels: false, withDefaultFonts: false })})</script>
<script src="${escapeHtml(scriptPath)}"></script>
</body>
</html>`

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
  return relativePath === "/openapi.json" || relativePath === "/docs" || relativePath === ReferenceScriptPath || relativePath === "/errors" ||
    relativePath.startsWith("/errors/")
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

/**
 * The pages under the public prefix that need no token: the OpenAPI document, the interactive
 * reference (Scalar, its script served from this origin, no CDN) and one page per error slug. All
 * but the script are built once at start-up; `find` answers the page of a path relative to the
 * prefix, if there is one.
 */
export const makeDocsPages = Effect.gen(function*() {
  const config = yield* GatewaySettings
  const options = {
    baseUrl: config.publicBaseUrl,
    rateLimitPerMinute: config.rateLimit.perToken,
    anonymousRateLimitPerMinute: config.rateLimit.perAnonymousIp,
    partnerRateLimitPerMinute: config.rateLimit.perPartner
  }
  // Made once for both the document and the reference page: making it took about 5% of the gateway's start-up CPU each time.
  const document = OpenApi.fromApi(documentedPublicApi(options))
  const openApi = HttpServerResponse.text(JSON.stringify(document), {
    contentType: "application/json",
    headers: { "x-content-type-options": "nosniff" }
  })
  const referenceHtml = referencePage(document, `${PublicApiPrefix}${ReferenceScriptPath}`)
  const reference = HttpServerResponse.setHeaders(HttpServerResponse.html(referenceHtml), htmlHeaders(referencePolicy(referenceHtml)))
  const referenceScript = yield* makeReferenceScript
  const htmlPage = (html: string) => HttpServerResponse.setHeaders(HttpServerResponse.html(html), htmlHeaders(pagePolicy))
  const errorPages = new Map<string, HttpServerResponse.HttpServerResponse>(
    Object.entries(ProblemCatalog).map(([code, row]) => [row.slug, htmlPage(errorPage(code as ErrorCode, config.publicBaseUrl))])
  )
  const index = htmlPage(errorIndex(config.publicBaseUrl))

  /** `undefined` when the path is not a documentation page; `null` for an unknown error slug. */
  const find = (relativePath: string, acceptEncoding: string | undefined) => {
    if (relativePath === "/openapi.json") return Effect.succeed(openApi)
    if (relativePath === "/docs") return Effect.succeed(reference)
    if (relativePath === ReferenceScriptPath) return referenceScript(acceptEncoding)
    if (relativePath === "/errors") return Effect.succeed(index)
    if (relativePath.startsWith("/errors/")) {
      const known = errorPages.get(relativePath.slice("/errors/".length))
      return known === undefined ? null : Effect.succeed(known)
    }
    return undefined
  }
  return { find }
})
