import { describe, expect, it } from "@effect/vitest"
import { HttpServerResponse } from "effect/http"
import { Effect } from "effect"
import { EventEmitter } from "node:events"
import type { ServerResponse } from "node:http"
import { problemAnswer, problemResponse, writeProblem } from "../../src/http/ProblemResponse.js"

const errorsUrl = "https://errors.example.test/api/"

/** Just enough of a node response to see what `writeProblem` wrote. */
const recordingResponse = () => {
  const written: { status?: number; headers?: Record<string, unknown>; body?: string } = {}
  const response = Object.assign(new EventEmitter(), {
    writeHead: (status: number, headers: Record<string, unknown>) => {
      written.status = status
      written.headers = headers
    },
    end: (body: string) => {
      written.body = body
    }
  }) as unknown as ServerResponse
  return { response, written }
}

describe("the problem-body writer", () => {
  it("builds the RFC 9457 body from the catalogue, the detail and the instance", () => {
    const answer = problemAnswer(errorsUrl, "INSUFFICIENT_SCOPE", "token scope 'read' does not allow it", "/api/v1/x", { "x-request-id": "r1" })
    expect(answer.status).toBe(403)
    expect(JSON.parse(answer.body)).toEqual({
      type: "https://errors.example.test/api/invalid-scope",
      title: "Insufficient scope",
      status: 403,
      detail: "token scope 'read' does not allow it",
      instance: "/api/v1/x",
      errorCode: "INSUFFICIENT_SCOPE"
    })
    expect(answer.headers).toEqual({ "x-request-id": "r1" })
  })

  it("tells every 503 when to retry, unless the caller already did", () => {
    expect(problemAnswer(errorsUrl, "UNAVAILABLE", "down", "/x").headers).toEqual({ "retry-after": "5" })
    expect(problemAnswer(errorsUrl, "UNAVAILABLE", "down", "/x", { "retry-after": "30" }).headers).toEqual({ "retry-after": "30" })
    expect(problemAnswer(errorsUrl, "INTERNAL", "boom", "/x").headers).toEqual({})
  })

  it.effect("answers the same bytes, status and headers on an Effect server and on a node response", () =>
    Effect.gen(function*() {
      const effectAnswer = problemResponse(errorsUrl, "UNAVAILABLE", "down", "/api/v1/y", { "x-request-id": "r2" })
      const { response, written } = recordingResponse()
      writeProblem(response, errorsUrl, "UNAVAILABLE", "down", "/api/v1/y", { "x-request-id": "r2" })
      const web = HttpServerResponse.toWeb(effectAnswer)
      expect(written.status).toBe(effectAnswer.status)
      expect(written.body).toBe(yield* Effect.promise(() => web.text()))
      expect(web.headers.get("content-type")).toBe("application/problem+json")
      expect(written.headers).toEqual({
        "x-request-id": "r2",
        "retry-after": "5",
        "content-type": "application/problem+json",
        "content-length": Buffer.byteLength(written.body!)
      })
      expect(web.headers.get("retry-after")).toBe("5")
      expect(web.headers.get("x-request-id")).toBe("r2")
    }))
})
