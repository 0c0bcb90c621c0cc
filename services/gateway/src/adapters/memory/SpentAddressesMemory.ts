import { Effect, Layer } from "effect"
import { SpentAddresses } from "../../ports/SpentAddresses.js"

/**
 * In process, one entry per address whose window is full, dropped once it is reset. Expired entries
 * of addresses that never come back are swept at most once per `sweepEveryMs`, so the map holds no
 * more addresses than the sliding-window log does.
 */
export const makeSpentAddressesMemory = (sweepEveryMs = 60_000) => {
  const until = new Map<string, number>()
  let lastSweep = Number.NEGATIVE_INFINITY
  const sweep = (nowMs: number) => {
    if (nowMs - lastSweep < sweepEveryMs) return
    lastSweep = nowMs
    for (const [ip, untilMs] of until) if (untilMs <= nowMs) until.delete(ip)
  }
  return SpentAddresses.of({
    markSpent: (clientIp, untilMs, nowMs) =>
      Effect.sync(() => {
        sweep(nowMs)
        until.set(clientIp, untilMs)
      }),
    isSpent: (clientIp, nowMs) =>
      Effect.sync(() => {
        const untilMs = until.get(clientIp)
        if (untilMs === undefined) return false
        if (untilMs > nowMs) return true
        until.delete(clientIp)
        return false
      })
  })
}

export const SpentAddressesMemoryLive = Layer.sync(SpentAddresses, () => makeSpentAddressesMemory())
