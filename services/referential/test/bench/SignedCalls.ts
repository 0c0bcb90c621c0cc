/**
 * What the referential's latency scripts share: calls signed with a fresh assertion each, as the
 * gateway sends them, to a running referential named by the environment.
 */
import { CallerIdentity } from "@portfolio/domain"
import { AssertionHeader, signAssertion } from "@portfolio/platform/security"

export const report = (line: string) => process.stdout.write(`${line}\n`)
const secret = process.env.INTERNAL_SECRET ?? ""
export const publicUrl = process.env.REFERENTIAL_URL ?? "http://127.0.0.1:8082"
export const adminUrl = process.env.REFERENTIAL_ADMIN_URL ?? "http://127.0.0.1:8083"

/** The answer's text; anything but 2xx throws. */
export const call = async (base: string, identity: CallerIdentity, method: string, path: string, body?: unknown) => {
  const json = body === undefined ? undefined : JSON.stringify(body)
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      [AssertionHeader]: signAssertion(secret, identity, { audience: "referential", method, target: path, body: json }),
      ...(json === undefined ? {} : { "content-type": "application/json" })
    },
    ...(json === undefined ? {} : { body: json })
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`)
  return text
}

export const operator = new CallerIdentity({ tenantId: "00000000-0000-0000-0000-000000000000", subject: "bench", role: "operator", scope: "admin" })
export const readerOf = (tenantId: string) => new CallerIdentity({ tenantId, subject: "bench-reader", role: "viewer", scope: "read" })

export const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!

/** The times of `requests` calls of `run` one after the other, in ms, sorted. */
export const timesOf = async (requests: number, run: () => Promise<unknown>) => {
  const times: Array<number> = []
  for (let i = 0; i < requests; i++) {
    const start = performance.now()
    await run()
    times.push(performance.now() - start)
  }
  return times.sort((a, b) => a - b)
}
