/**
 * Which issuer URLs a tenant's connection may name (docs/security.md, "Single sign-on"): https,
 * with no credentials, query or fragment. Plain http only for a provider on this machine's loopback
 * and only where the settings allow it (`npm start` does, so that a provider run locally can be
 * tried; production does not): the code exchange carries the client secret, and the keys that
 * sign the id tokens come from the issuer.
 */
export const issuerProblem = (text: string, options: { readonly allowLoopbackHttp: boolean }): string | undefined => {
  if (!URL.canParse(text)) return "the issuer must be an absolute URL"
  const url = new URL(text)
  if (url.username !== "" || url.password !== "") return "the issuer must not carry credentials"
  if (url.search !== "" || url.hash !== "") return "the issuer must have no query or fragment"
  if (url.protocol === "https:") return undefined
  if (url.protocol === "http:" && options.allowLoopbackHttp && isLoopbackHost(url.hostname)) return undefined
  return options.allowLoopbackHttp
    ? "the issuer must be https (plain http only on a loopback address)"
    : "the issuer must be https"
}

const isLoopbackHost = (hostname: string) =>
  hostname === "localhost" || hostname === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname)

/** The address the provider sends the browser back to, one per tenant, on the console. */
export const redirectUriOf = (consoleUrl: string, slug: string) => `${consoleUrl.replace(/\/+$/, "")}/sso/${slug}/callback`
