import { describe, expect, it } from "vitest"
import { issuerProblem, redirectUriOf } from "../../src/domain/SsoIssuer.js"

describe("the issuers a connection may name", () => {
  it("takes https, and plain http only on loopback where allowed", () => {
    const production = { allowLoopbackHttp: false }
    const local = { allowLoopbackHttp: true }
    expect(issuerProblem("https://acme.okta.com", production)).toBeUndefined()
    expect(issuerProblem("https://login.microsoftonline.com/3f2a/v2.0", production)).toBeUndefined()
    expect(issuerProblem("http://127.0.0.1:4000", production)).toBe("the issuer must be https")
    for (const issuer of ["http://127.0.0.1:4000", "http://127.8.0.1/", "http://localhost:3000/oidc", "http://[::1]:8080"]) {
      expect(issuerProblem(issuer, local), issuer).toBeUndefined()
    }
    for (const issuer of ["http://10.0.0.8", "http://idp.example", "http://127.0.0.1.nip.io", "ftp://127.0.0.1"]) {
      expect(issuerProblem(issuer, local), issuer).toBe("the issuer must be https (plain http only on a loopback address)")
    }
  })

  it("refuses what no issuer identifier holds: no URL, credentials, a query or a fragment", () => {
    const options = { allowLoopbackHttp: false }
    expect(issuerProblem("acme.okta.com", options)).toBe("the issuer must be an absolute URL")
    expect(issuerProblem("https://user:pw@acme.okta.com", options)).toBe("the issuer must not carry credentials")
    expect(issuerProblem("https://acme.okta.com?tenant=1", options)).toBe("the issuer must have no query or fragment")
    expect(issuerProblem("https://acme.okta.com#x", options)).toBe("the issuer must have no query or fragment")
  })

  it("sends the browser back to the console, one address per tenant", () => {
    expect(redirectUriOf("https://portfolio.example/console/", "acme")).toBe("https://portfolio.example/console/sso/acme/callback")
  })
})
