import { Effect, Layer } from "effect"
import { SpentAddresses } from "../../../ports/rate-limit/SpentAddresses.js"
import { makeExpiringLru } from "@portfolio/platform/cache"

/**
 * In process, one entry per address whose window is full, until that window's reset. Bounded, so
 * that a flood from many addresses cannot grow it without end: an address pushed out early costs
 * one token lookup before it is marked again.
 */
const makeSpentAddressesMemory = (capacity: number) => {
  const spent = makeExpiringLru<true>(capacity)
  return SpentAddresses.of({
    markSpent: (clientIp, untilMs) => Effect.sync(() => spent.set(clientIp, true, untilMs)),
    isSpent: (clientIp, nowMs) => Effect.sync(() => spent.get(clientIp, nowMs) !== undefined)
  })
}

export const SpentAddressesMemory = Layer.sync(SpentAddresses, () => makeSpentAddressesMemory(100_000))
