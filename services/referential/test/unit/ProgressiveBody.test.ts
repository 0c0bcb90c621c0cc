import { describe, expect, it } from "vitest"
import { ProgressiveBody } from "../../src/adapters/http/ProgressiveBody.js"

const text = (pieces: ReadonlyArray<Uint8Array>) => Buffer.concat(pieces).toString()
const collect = async (body: ProgressiveBody) => {
  const pieces: Array<Uint8Array> = []
  for await (const piece of body.follow()) pieces.push(piece)
  return pieces
}
const turn = () => new Promise((resolve) => setImmediate(resolve))

describe("ProgressiveBody", () => {
  it("gives every follower every byte, from whenever it starts, before and after the making ends", async () => {
    const body = new ProgressiveBody()
    const early = collect(body)
    body.push(Buffer.from("[1,"))
    await turn()
    const middle = collect(body)
    body.push(Buffer.from("2,"))
    await turn()
    body.push(Buffer.from("3]"))
    const whole = body.end()
    const late = await collect(body)
    expect(Buffer.from(whole).toString()).toBe("[1,2,3]")
    expect([text(await early), text(await middle), text(late)]).toEqual(["[1,2,3]", "[1,2,3]", "[1,2,3]"])
  })

  it("hands a follower the first pieces before the making ends", async () => {
    const body = new ProgressiveBody()
    body.push(Buffer.from("first"))
    const follower = body.follow()
    expect(Buffer.from((await follower.next()).value as Uint8Array).toString()).toBe("first")
    expect(body.settled).toBe(false)
    body.end()
    expect((await follower.next()).done).toBe(true)
  })

  it("fails its followers as the making failed, once started or not", async () => {
    const body = new ProgressiveBody()
    const started = body.started()
    body.push(Buffer.from("[1,"))
    await started
    const follower = collect(body)
    body.fail(new Error("storage down"))
    await expect(follower).rejects.toThrow("storage down")
    await expect(collect(body)).rejects.toThrow("storage down")
    await body.started()
    expect(body.settled).toBe(true)
  })
})
