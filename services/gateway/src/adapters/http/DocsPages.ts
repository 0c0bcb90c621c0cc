import { HttpApiScalar, HttpLayerRouter, HttpServerResponse } from "@effect/platform"
import { type ErrorCode, ProblemCatalog, PublicApiPrefix } from "@portfolio/domain"
import { documentedPublicApi, publicOpenApiDocument } from "@portfolio/domain/OpenApiDocument"
import { ProblemExplanations } from "@portfolio/domain/ProblemExplanations"
import { escapeHtml } from "@portfolio/platform"
import { Effect } from "effect"
import { GatewayConfig } from "../../Config.js"


/** Inline code spans of the explanations, rendered after escaping. */
const withCode = (text: string) => escapeHtml(text).replace(/`([^`]+)`/g, "<code>$1</code>")

const page = (title: string, body: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8" />
<meta name="viewport" content="width=device-width, initial-scale=1" />
<title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:46rem;margin:3rem auto;padding:0 1rem;line-height:1.5;color:#1b1f24}code{background:#eef1f4;padding:0 .25rem;border-radius:3px}table{border-collapse:collapse}td,th{border:1px solid #d0d7de;padding:.3rem .6rem;text-align:left}</style>
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

/** Whether a request asks for a documentation page (or an unknown error page), which needs no token. */
export const isDocumentationRequest = (method: string, path: string): boolean => {
  if (method !== "GET" || !path.startsWith(PublicApiPrefix)) return false
  const relativePath = path.slice(PublicApiPrefix.length)
  return relativePath === "/openapi.json" || relativePath === "/docs" || relativePath === "/errors" || relativePath.startsWith("/errors/")
}

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
    anonymousRateLimitPerMinute: config.rateLimit.perAnonymousIp
  }
  const openApi = HttpServerResponse.text(JSON.stringify(publicOpenApiDocument(options)), { contentType: "application/json" })
  const docsPath = `${PublicApiPrefix}/docs` as const
  const reference = yield* HttpLayerRouter.toHttpEffect(
    HttpApiScalar.layerHttpLayerRouter({ api: documentedPublicApi(options), path: docsPath, scalar: { hideModels: false } })
  )
  const errorPages = new Map<string, HttpServerResponse.HttpServerResponse>(
    Object.entries(ProblemCatalog).map(([code, row]) => [row.slug, HttpServerResponse.html(errorPage(code as ErrorCode, config.publicBaseUrl))])
  )
  const index = HttpServerResponse.html(errorIndex(config.publicBaseUrl))

  /** `undefined` when the path is not a documentation page; `null` for an unknown error slug. */
  const find = (relativePath: string) => {
    if (relativePath === "/openapi.json") return Effect.succeed(openApi)
    if (relativePath === "/docs") return Effect.orDie(reference)
    if (relativePath === "/errors") return Effect.succeed(index)
    if (relativePath.startsWith("/errors/")) {
      const known = errorPages.get(relativePath.slice("/errors/".length))
      return known === undefined ? null : Effect.succeed(known)
    }
    return undefined
  }
  return { find }
})
