import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { guardedFetch, NotPublic } from "../../src/adapters/openid/GuardedFetch.js"

let server: Server
let url = ""

beforeAll(async () => {
  server = createServer((_request, response) => response.end("ok"))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
})
afterAll(() => server.close())

const get = (allowLoopback: boolean, target: string) => guardedFetch(allowLoopback)(target, { body: undefined, headers: {}, method: "GET", redirect: "manual" } as never)

describe("the identity providers' client", () => {
  it("reaches only public addresses; loopback too where a provider on this machine is allowed", async () => {
    expect(await (await get(true, url)).text()).toBe("ok")
    await expect(get(false, url)).rejects.toMatchObject({ code: NotPublic, message: "127.0.0.1 is not a public address (loopback)" })
    await expect(get(false, url.replace("127.0.0.1", "localhost"))).rejects.toMatchObject({ code: NotPublic })
    // Never, whatever the settings: the cloud's metadata service, private networks, names that can only be local.
    for (const [target, reason] of [["http://169.254.169.254/latest/meta-data/", "metadata"], ["https://10.1.2.3/token", "private"], ["https://metadata.google.internal/", "metadata"]]) {
      await expect(get(true, target!), target).rejects.toMatchObject({ code: NotPublic, message: expect.stringContaining(`(${reason})`) })
    }
  })
})
