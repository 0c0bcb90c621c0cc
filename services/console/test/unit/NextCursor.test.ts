import { nextPageReference } from "@portfolio/platform"
import { describe, expect, it } from "vitest"
import { nextCursor } from "../../src/adapters/admin-apis/TokenDeskHttp.js"

describe("nextCursor", () => {
  it("reads the cursor of the Link header the gateway's lists write, and none on the last page", () => {
    const cursor = "eyJrIjpbMTcxOTc5MjAwMDAwMCwiYWJjIl19.x-_"
    const reference = nextPageReference("/admin/pat-requests?tenantId=t&limit=50&cursor=old", cursor)
    expect(nextCursor(`<${reference}>; rel="next"`)).toBe(cursor)
    expect(nextCursor(undefined)).toBeNull()
    expect(nextCursor('<pat-requests?limit=50>; rel="prev"')).toBeNull()
  })
})
