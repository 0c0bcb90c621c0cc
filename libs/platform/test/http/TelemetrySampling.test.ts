import { HttpServer, HttpServerResponse } from "effect/http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { ConfigProvider, Effect, Layer, Logger } from "effect"
import { randomBytes } from "node:crypto"
import http from "node:http"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { OtlpCollector } from "../../../../test/support/otlpCollector.js"
import { TelemetryLive, withTraceIds } from "../../src/telemetry/Telemetry.js"
import { jsonLogger } from "../../src/telemetry/LogFormat.js"
import { parentSpanOf } from "../../src/telemetry/TraceContext.js"

// The exporter reads its endpoint from the process's environment; the sampler comes only through
// Effect's Config (`run`), so a sampler that did not reach the SDK would leave the SDK's default.
const collector = new OtlpCollector()
let endpoint = ""
beforeAll(async () => {
  endpoint = await collector.start()
  vi.stubEnv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
})
afterAll(async () => {
  vi.unstubAllEnvs()
  await collector.stop()
})

const configured = (env: Record<string, string>) => ConfigProvider.fromUnknown({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, ...env })

/**
 * Runs `program` under `TelemetryLive` with `env`, the logger wrapped by `withTraceIds`; answers
 * its result and the lines it wrote, once the layer is released, hence its spans exported.
 */
const run = <A, E>(env: Record<string, string>, program: Effect.Effect<A, E>) => {
  const lines: Array<Record<string, unknown>> = []
  const capture = withTraceIds(Logger.map(jsonLogger, (line) => void lines.push(JSON.parse(line) as Record<string, unknown>)))
  return Effect.runPromise(program.pipe(
    Effect.provide(TelemetryLive("sampling-test")),
    Effect.provide(Logger.layer([capture])),
    Effect.provideService(ConfigProvider.ConfigProvider, configured(env))
  )).then((result) => ({ result, lines }))
}

const hex32 = (n: number) => (n >>> 0).toString(16).padStart(8, "0")
const random32 = () => randomBytes(4).readUInt32BE()

/**
 * A fresh trace id whose four 32-bit parts XOR to `accumulation`: what the SDK's
 * TraceIdRatioBasedSampler compares with ratio × 2³², so that a ratio keeps or drops it for sure.
 */
const traceIdAccumulating = (accumulation: number) => {
  const [a, b] = [random32(), random32()]
  return hex32(a) + hex32(a) + hex32(b) + hex32(b ^ accumulation)
}
const lowTraceId = () => traceIdAccumulating(1)
const highTraceId = () => traceIdAccumulating(0xffff_ffff)

type Parent = "root" | { readonly traceId: string; readonly sampled: boolean }

/**
 * A span and its child, a trace root or under a parent as a `traceparent` names it; answers what
 * the next hop's traceparent would say of it. Each writes a line.
 */
const traceOne = (parent: Parent) =>
  Effect.gen(function*() {
    const span = yield* Effect.currentSpan
    yield* Effect.logInfo("outer")
    yield* Effect.withSpan(Effect.logInfo("inner"), "inner")
    return { traceId: span.traceId, sampled: span.sampled }
  }).pipe(
    Effect.withSpan(
      "outer",
      parent === "root" ? {} : { parent: parentSpanOf(`00-${parent.traceId}-${randomBytes(8).toString("hex")}-${parent.sampled ? "01" : "00"}`)! }
    )
  )

const exported = (traceId: string) => collector.spans.filter((span) => span.traceId === traceId).map((span) => span.name).sort()

/**
 * Runs one trace per parent under `env`'s sampler and answers, for each, whether it was kept, as
 * exported (both spans, or neither) and as propagated (the next hop's sampled flag), checking on
 * the way that the two agree and that every line carries the trace's id.
 */
const keptUnder = async (env: Record<string, string>, parents: ReadonlyArray<Parent>) => {
  const { lines, result } = await run(env, Effect.forEach(parents, traceOne))
  return result.map(({ sampled, traceId }, i) => {
    const spans = exported(traceId)
    expect(spans, `trace ${i} exported whole or not at all`).toEqual(sampled ? ["inner", "outer"] : [])
    const parent = parents[i]!
    if (parent !== "root") expect(traceId).toBe(parent.traceId)
    expect(lines.slice(2 * i, 2 * i + 2).map((line) => (line["annotations"] as Record<string, unknown>)["traceId"])).toEqual([traceId, traceId])
    return sampled
  })
}

describe("TelemetryLive's sampler", () => {
  const sampledParent = () => ({ traceId: lowTraceId(), sampled: true })
  const unsampledParent = () => ({ traceId: lowTraceId(), sampled: false })
  const parents = (): ReadonlyArray<Parent> => ["root", sampledParent(), unsampledParent()]

  it("keeps a root trace and follows the parent's sampled flag by default (parentbased_always_on), set or empty", async () => {
    expect(await keptUnder({}, parents())).toEqual([true, true, false])
    expect(await keptUnder({ OTEL_TRACES_SAMPLER: "", OTEL_TRACES_SAMPLER_ARG: "" }, parents())).toEqual([true, true, false])
    expect(await keptUnder({ OTEL_TRACES_SAMPLER: "parentbased_always_on" }, parents())).toEqual([true, true, false])
  })

  it("keeps everything with always_on, and nothing with always_off, whatever the parent says", async () => {
    expect(await keptUnder({ OTEL_TRACES_SAMPLER: "always_on" }, parents())).toEqual([true, true, true])
    expect(await keptUnder({ OTEL_TRACES_SAMPLER: "always_off" }, parents())).toEqual([false, false, false])
  })

  it("keeps by trace id alone with traceidratio: none at 0, all at 1 (the default ratio), by the id in between", async () => {
    expect(await keptUnder({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "0" }, parents())).toEqual([false, false, false])
    expect(await keptUnder({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "1" }, parents())).toEqual([true, true, true])
    expect(await keptUnder({ OTEL_TRACES_SAMPLER: "traceidratio" }, parents())).toEqual([true, true, true])
    const byId: ReadonlyArray<Parent> = [
      { traceId: lowTraceId(), sampled: false },
      { traceId: highTraceId(), sampled: true }
    ]
    expect(await keptUnder({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.5" }, byId)).toEqual([true, false])
  })

  it("follows the parent with parentbased_always_off and parentbased_traceidratio, deciding only for a root", async () => {
    expect(await keptUnder({ OTEL_TRACES_SAMPLER: "parentbased_always_off" }, parents())).toEqual([false, true, false])
    expect(await keptUnder({ OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0" }, parents())).toEqual([false, true, false])
    expect(await keptUnder({ OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "1" }, parents())).toEqual([true, true, false])
    // The ratio would drop the first and keep the second: the parent's flag decides.
    const againstTheRatio: ReadonlyArray<Parent> = [{ traceId: highTraceId(), sampled: true }, { traceId: lowTraceId(), sampled: false }]
    expect(await keptUnder({ OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.5" }, againstTheRatio)).toEqual([true, false])
  })

  it("follows the sampled flag of a traceparent received by an HTTP server, and the lines still carry the trace id", async () => {
    const kept = lowTraceId()
    const dropped = lowTraceId()
    const { lines, result } = await run(
      {},
      Effect.gen(function*() {
        yield* HttpServer.serveEffect()(Effect.as(Effect.logInfo("served"), HttpServerResponse.text("ok")))
        const { address } = yield* HttpServer.HttpServer
        const url = `http://127.0.0.1:${address._tag === "UnixPathAddress" ? 0 : address.port}/`
        return yield* Effect.forEach([[kept, "01"], [dropped, "00"]] as const, ([traceId, flags]) =>
          Effect.promise(() => fetch(url, { headers: { traceparent: `00-${traceId}-${randomBytes(8).toString("hex")}-${flags}` } }).then((reply) => reply.status)))
      }).pipe(Effect.scoped, Effect.provide(NodeHttpServer.layer(() => http.createServer(), { port: 0, host: "127.0.0.1" })))
    )
    expect(result).toEqual([200, 200])
    expect(exported(kept)).toHaveLength(1)
    expect(exported(dropped)).toEqual([])
    const served = lines.filter((line) => line["message"] === "served").map((line) => (line["annotations"] as Record<string, unknown>)["traceId"])
    expect(served).toEqual([kept, dropped])
  })
})

describe("OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG", () => {
  const refusal = (env: Record<string, string>) =>
    Effect.runPromise(Layer.build(TelemetryLive("sampling-test")).pipe(
      Effect.scoped,
      Effect.as("started"),
      Effect.catch((error) => Effect.succeed(String(error))),
      Effect.provideService(ConfigProvider.ConfigProvider, configured(env))
    ))
  const samplers = "always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio"

  it("stop the service on a value the specification does not define, naming the variable, exporter or not", async () => {
    for (const sampler of ["always", "AlwaysOn", "parentbased_jaeger_remote", "xray"]) {
      expect(await refusal({ OTEL_TRACES_SAMPLER: sampler })).toBe(`(Invalid data at OTEL_TRACES_SAMPLER: "Expected one of ${samplers} but received "${sampler}"")`)
    }
    for (const ratio of ["1.5", "-0.1", "half", "NaN", "Infinity", "0x1", "1/2"]) {
      expect(await refusal({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: ratio })).toBe(
        `(Invalid data at OTEL_TRACES_SAMPLER_ARG: "Expected a sampling ratio from 0 to 1 but received "${ratio}"")`
      )
    }
    // A ratio is checked even beside a sampler that takes none, and with no exporter at all.
    expect(await refusal({ OTEL_TRACES_SAMPLER: "always_on", OTEL_TRACES_SAMPLER_ARG: "2" })).toContain("OTEL_TRACES_SAMPLER_ARG")
    expect(await refusal({ OTEL_EXPORTER_OTLP_ENDPOINT: "", OTEL_TRACES_SAMPLER: "sometimes" })).toContain("OTEL_TRACES_SAMPLER:")
    for (const ratio of ["0.25", " .5 ", "1.0", "0", "-0", "1e-3"]) {
      expect(await refusal({ OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: ratio }), ratio).toBe("started")
    }
  })
})
