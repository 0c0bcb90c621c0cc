/**
 * What the internal assertion costs per proxied request: signing (the gateway) plus verifying
 * (the service), with jose (WebCrypto HMAC, asynchronous) and with the platform's codec
 * (node:crypto HMAC, synchronous), for the same JWS: `npx tsx libs/platform/test/bench/assertion-signing.ts`.
 * One process, rounds alternating, the best round of each printed; not part of `npm test`.
 */
import { CallerIdentity } from "@portfolio/domain"
import { type JWTPayload, jwtVerify, SignJWT } from "jose"
import { randomBytes } from "node:crypto"
import { AssertionType, bodyDigest, signAssertion, targetDigest, verificationKeys, verifyAssertion } from "../../src/security/AssertionToken.js"

const Rounds = 5
const OpsPerRound = 20_000
const secret = randomBytes(32).toString("hex")
const identity = new CallerIdentity({ tenantId: "5d7c9a3e-1b2f-4c6d-8e9f-0a1b2c3d4e5f", subject: "sub-1", role: "architect", scope: "read" })
const request = { audience: "referential", method: "GET", target: "/api/v1/referentiel/applications/APP-0001?status=ACTIVE" } as const
const body = JSON.stringify({ email: "new.member@example.com", arbRole: "viewer", note: "x".repeat(960) })

const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"])
const joseSign = () => {
  const claims: JWTPayload = {
    sub: identity.subject,
    tenant: identity.tenantId,
    role: identity.role,
    scope: identity.scope,
    htm: request.method,
    thd: targetDigest(request.target),
    bdh: bodyDigest(undefined),
    jti: randomBytes(16).toString("base64url")
  }
  return new SignJWT(claims).setProtectedHeader({ alg: "HS256", typ: AssertionType, kid: "k" }).setAudience(request.audience)
    .setIssuedAt().setExpirationTime("30s").sign(key)
}
const joseVerify = (token: string) => jwtVerify(token, key, { algorithms: ["HS256"], typ: AssertionType, audience: request.audience })
let joseToken = await joseSign()

const keys = verificationKeys(secret)
const codecSign = () => signAssertion(secret, identity, request)
const codecVerify = (token: string) => {
  if (verifyAssertion(keys, token, request)._tag !== "Success") throw new Error("the codec refused its own assertion")
}
let codecToken = codecSign()
const bodyOfKiB = Buffer.from(body)
const codecWithBody = () => {
  const token = signAssertion(secret, identity, { ...request, method: "POST", body: bodyOfKiB })
  if (verifyAssertion(keys, token, { ...request, method: "POST", body })._tag !== "Success") throw new Error("refused")
}

// The verified tokens are re-signed before each round, outside the timing: they live 30 s.
const round = async (run: () => unknown): Promise<number> => {
  joseToken = await joseSign()
  codecToken = codecSign()
  const start = performance.now()
  for (let i = 0; i < OpsPerRound; i++) await run()
  return OpsPerRound / ((performance.now() - start) / 1000)
}

const candidates: Record<string, readonly [string, () => unknown]> = {
  "sign (the gateway, per request)": ["jose SignJWT", joseSign],
  "verify (the service, per request)": ["jose jwtVerify", () => joseVerify(joseToken)],
  "sign + verify": ["jose", async () => joseVerify(await joseSign())]
}
const ours: Record<string, () => unknown> = {
  "sign (the gateway, per request)": codecSign,
  "verify (the service, per request)": () => codecVerify(codecToken),
  "sign + verify": () => codecVerify(codecSign())
}
const runs: Record<string, () => unknown> = { "sign + verify with a 1 KiB body digested on both sides (codec)": codecWithBody }
for (const [what, [, run]] of Object.entries(candidates)) {
  runs[`${what}: jose`] = run
  runs[`${what}: node:crypto codec`] = ours[what]!
}
const best: Record<string, number> = {}
for (const run of Object.values(runs)) await round(run)
for (let r = 0; r < Rounds; r++) {
  for (const [name, run] of Object.entries(runs)) best[name] = Math.max(best[name] ?? 0, await round(run))
}
const line = (name: string, opsPerSecond: number, ratio: string) =>
  process.stdout.write(`${name.padEnd(66)} ${Math.round(opsPerSecond).toLocaleString("en").padStart(9)} ops/s ${(1e6 / opsPerSecond).toFixed(1).padStart(6)} µs  ${ratio}\n`)
for (const what of Object.keys(candidates)) {
  const [jose, codec] = [best[`${what}: jose`]!, best[`${what}: node:crypto codec`]!]
  line(`${what}: jose`, jose, "")
  line(`${what}: node:crypto codec`, codec, `x${(codec / jose).toFixed(1)} jose`)
}
for (const name of Object.keys(runs).filter((name) => !name.includes(": "))) line(name, best[name]!, "")
