import { Applications } from "./resources/applications.js"
import { Functions } from "./resources/functions.js"
import { Invitations } from "./resources/invitations.js"
import { Transport, type ClientOptions } from "./transport.js"

/**
 * The client of the architecture-portfolio public API.
 *
 * ```ts
 * const client = new PortfolioClient({ token: process.env.PORTFOLIO_TOKEN! })
 * const app = await client.applications.get("CRM-01")
 * ```
 */
export class PortfolioClient {
  readonly applications: Applications
  readonly functions: Functions
  readonly invitations: Invitations

  constructor(options: ClientOptions) {
    const transport = new Transport(options, (ms, signal) => this.sleep(ms, signal))
    this.applications = new Applications(transport)
    this.functions = new Functions(transport)
    this.invitations = new Invitations(transport)
  }

  /**
   * Waits between two attempts; rejects with the signal's reason when the call is aborted meanwhile.
   * Protected so that a subclass can replace the clock (tests that must not wait).
   */
  protected sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason)
      const onAbort = () => {
        clearTimeout(timer)
        reject(signal?.reason)
      }
      const timer = setTimeout(() => {
        signal?.removeEventListener("abort", onAbort)
        resolve()
      }, ms)
      signal?.addEventListener("abort", onAbort, { once: true })
    })
  }
}
