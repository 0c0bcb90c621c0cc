import { describe, expect, it } from "vitest"
import { eventsDurableStart, ReplayMarginMs } from "../../src/domain/EventsReplay.js"

const day = 86_400_000
const now = new Date("2026-10-01T00:00:00.000Z")
const ago = (ms: number) => new Date(now.getTime() - ms)

describe("where a new events durable starts", () => {
  it("at the oldest enabled subscription when it is within the deliveries' retention", () => {
    expect(eventsDurableStart(ago(3 * day), now, 30 * day)).toEqual(ago(3 * day))
  })

  it("never before the retention less the margin: a pruned delivery's event is never heard again", () => {
    expect(eventsDurableStart(ago(400 * day), now, 30 * day)).toEqual(ago(30 * day - ReplayMarginMs))
  })

  it("now when no subscription is enabled, and at the oldest whatever its age when deliveries are kept for ever", () => {
    expect(eventsDurableStart(undefined, now, 30 * day)).toEqual(now)
    expect(eventsDurableStart(ago(400 * day), now, "forever")).toEqual(ago(400 * day))
  })
})
