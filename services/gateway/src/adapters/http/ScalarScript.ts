import { HttpApi, HttpApiScalar, HttpLayerRouter } from "@effect/platform"
/**
 * Scalar's standalone script as the Effect platform embeds it (the version the lock file pins), read
 * through its public API: the platform's own reference page inlines it as the page's last script.
 * The module that holds it is internal to the package (and not exported at all in Effect 4), so it is
 * not imported; the page is rendered once, in memory, with no server and no request logger.
 */
export const scalarStandaloneScript = async (): Promise<string> => {
  const { dispose, handler } = HttpLayerRouter.toWebHandler(
    HttpApiScalar.layerHttpLayerRouter({ api: HttpApi.make("reference"), path: "/reference" }),
    { disableLogger: true }
  )
  try {
    const html = await (await handler(new Request("http://127.0.0.1/reference"))).text()
    const start = html.lastIndexOf("<script>")
    const end = html.lastIndexOf("</script>")
    if (start < 0 || end < start) throw new Error("the platform's reference page no longer ends with Scalar's inline script")
    return html.slice(start + "<script>".length, end)
  } finally {
    await dispose()
  }
}
