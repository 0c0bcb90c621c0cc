import { HttpRouter } from "effect/http"
import { HttpApi, HttpApiScalar } from "effect/http-api"
/**
 * Scalar's standalone script as the Effect platform embeds it (the version the lock file pins), read
 * through its public API: the platform's own reference page inlines it as the page's first script,
 * before the one that starts Scalar on the document. The module that holds it is internal to the
 * package (and not exported at all in Effect 4), so it is not imported; the page is rendered once,
 * in memory, with no server and no request logger.
 */
export const scalarStandaloneScript = async (): Promise<string> => {
  const { dispose, handler } = HttpRouter.toWebHandler(
    HttpApiScalar.layer(HttpApi.make("reference"), { path: "/reference" }),
    { disableLogger: true }
  )
  try {
    const html = await (await handler(new Request("http://127.0.0.1/reference"))).text()
    const start = html.indexOf("<script>")
    const end = html.indexOf("</script>", start)
    if (start < 0 || end < start || !html.slice(end).includes("window.Scalar.createApiReference")) {
      throw new Error("the platform's reference page no longer starts with Scalar's inline script")
    }
    return html.slice(start + "<script>".length, end)
  } finally {
    await dispose()
  }
}
