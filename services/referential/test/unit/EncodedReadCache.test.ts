import { describe, expect, layer } from "@effect/vitest"
import { walkedTree } from "../support/Forests.js"
import { HttpServerRequest, type HttpServerResponse } from "effect/http"
import { FunctionTreeNode, NotFound } from "@portfolio/domain"
import { brotliCompressSync, brotliDecompressSync, constants, gunzipSync } from "node:zlib"
import { FunctionRepository } from "../../src/ports/FunctionRepository.js"
import { Cause, ConfigProvider, Deferred, Effect, Exit, Fiber, Layer, Option, Schema, Stream } from "effect"
import { Metrics, MetricsLive } from "@portfolio/platform/telemetry"
import { parsePrometheusText, samplesOf, sumOf } from "@portfolio/platform/testing"
import { cachedBody, cachedJson, DecompressedChunks, EncodedReadCache, IdentityKeptBelow, IdleEntryMs, MayBeSmall } from "../../src/adapters/http/EncodedReadCache.js"
import { LargeBody } from "@portfolio/platform/http"
import { ReadFreshness } from "../../src/usecases/ReadFreshness.js"
import { createFunction } from "../../src/usecases/FunctionCommands.js"

import { fnInput, tenantA, tenantB } from "../support/Fixtures.js"
import { MemoryLayer } from "../support/Memory.js"

/** Counts whole-forest reads, and can make the next one die. */
const probe = { reads: 0, failNext: false }
const CountingFunctions = Layer.effect(
  FunctionRepository,
  Effect.map(FunctionRepository, (inner) => ({
    ...inner,
    walk: (tenantId: string) =>
      Stream.suspend(() => {
        probe.reads += 1
        if (probe.failNext) {
          probe.failNext = false
          return Stream.die("storage down")
        }
        return inner.walk(tenantId)
      })
  }))
)
const TestLayer = Layer.mergeAll(CountingFunctions, EncodedReadCache.fixed(1024 * 1024), ReadFreshness.layer).pipe(Layer.provideMerge(MemoryLayer))

const Tree = Schema.Array(FunctionTreeNode)
const codes = (response: HttpServerResponse.HttpServerResponse) => {
  const body = response.body as { readonly body: Uint8Array; readonly contentType: string }
  expect(body.contentType).toBe("application/json")
  return (JSON.parse(new TextDecoder().decode(body.body)) as Array<{ code: string }>).map((node) => node.code)
}
const tree = (tenantId: string) =>
  Effect.flatMap(Effect.context<FunctionRepository>(), (storage) =>
    cachedJson("tree", ["functions"], tenantId, Tree, () => Effect.provide(walkedTree(tenantId), storage)))

describe("encoded read cache", () => {
  layer(TestLayer)((it) => {
    it.effect("serves the same tenant's tree from the cache until a write of functions moves their revision", () =>
      Effect.gen(function*() {
        yield* createFunction(tenantA, fnInput({ code: "A", name: "a" }))
        expect(codes(yield* tree(tenantA))).toEqual(["A"])
        expect(codes(yield* tree(tenantA))).toEqual(["A"])
        expect(probe.reads).toBe(1)

        yield* createFunction(tenantA, fnInput({ code: "B", name: "b" }))
        expect(codes(yield* tree(tenantA))).toEqual(["A", "B"])
        expect(probe.reads).toBe(2)

        expect(codes(yield* tree(tenantB))).toEqual([])
        expect(probe.reads).toBe(3)
      }))

    it.effect("builds once for concurrent requests after a write", () =>
      Effect.gen(function*() {
        yield* createFunction(tenantA, fnInput({ code: "C", name: "c" }))
        const before = probe.reads
        const answers = yield* Effect.all(Array.from({ length: 8 }, () => tree(tenantA)), { concurrency: "unbounded" })
        expect(answers.map(codes)).toEqual(Array.from({ length: 8 }, () => ["A", "B", "C"]))
        expect(probe.reads - before).toBe(1)
      }))

    it.effect("does not keep a failed build", () =>
      Effect.gen(function*() {
        yield* createFunction(tenantA, fnInput({ code: "D", name: "d" }))
        probe.failNext = true
        expect(Exit.isFailure(yield* Effect.exit(tree(tenantA)))).toBe(true)
        expect(codes(yield* tree(tenantA))).toEqual(["A", "B", "C", "D"])
      }))
  })
})

const requestAccepting = (acceptEncoding: string | undefined) =>
  HttpServerRequest.fromWeb(new Request("http://referential.test/api/v1/referentiel/functions", {
    headers: acceptEncoding === undefined ? {} : { "accept-encoding": acceptEncoding }
  }))
const bytesOf = (response: HttpServerResponse.HttpServerResponse) => (response.body as { readonly body: Uint8Array }).body
const lengthOf = (response: HttpServerResponse.HttpServerResponse) => (response.body as { readonly contentLength?: number }).contentLength
const streamOf = (response: HttpServerResponse.HttpServerResponse) => (response.body as { readonly stream: Stream.Stream<Uint8Array, unknown> }).stream

describe("encoded read cache compression", () => {
  layer(TestLayer)((it) => {
    it.effect("answers a large form in the coding the request prefers, made once and then shared by every request", () =>
      Effect.gen(function*() {
        for (let i = 0; i < 40; i++) yield* createFunction(tenantB, fnInput({ code: `Z${String(i).padStart(2, "0")}`, name: `function ${i}` }))
        const plain = yield* Effect.provideService(tree(tenantB), HttpServerRequest.HttpServerRequest, requestAccepting(undefined))
        expect(plain.headers["content-encoding"]).toBeUndefined()
        expect(plain.headers["vary"]).toBe("accept-encoding")
        const identity = bytesOf(plain)
        expect(identity.byteLength).toBeGreaterThan(1_400)
        const [br1, br2] = yield* Effect.all([
          Effect.provideService(tree(tenantB), HttpServerRequest.HttpServerRequest, requestAccepting("gzip, br")),
          Effect.provideService(tree(tenantB), HttpServerRequest.HttpServerRequest, requestAccepting("br"))
        ], { concurrency: "unbounded" })
        expect([br1!.headers["content-encoding"], br2!.headers["content-encoding"]]).toEqual(["br", "br"])
        expect(bytesOf(br2!)).toBe(bytesOf(br1!))
        expect(Buffer.compare(brotliDecompressSync(bytesOf(br1!)), Buffer.from(identity))).toBe(0)
        const gzip = yield* Effect.provideService(tree(tenantB), HttpServerRequest.HttpServerRequest, requestAccepting("gzip;q=1, br;q=0.1"))
        expect(gzip.headers["content-encoding"]).toBe("gzip")
        expect(Buffer.compare(gunzipSync(bytesOf(gzip)), Buffer.from(identity))).toBe(0)
        const again = yield* Effect.provideService(tree(tenantB), HttpServerRequest.HttpServerRequest, requestAccepting("gzip"))
        expect(bytesOf(again)).toBe(bytesOf(gzip))
      }))

    it.effect("answers a small form as it is, whatever the request accepts", () =>
      Effect.gen(function*() {
        const small = yield* Effect.provideService(tree(tenantA), HttpServerRequest.HttpServerRequest, requestAccepting("br, gzip"))
        expect(bytesOf(small).byteLength).toBeLessThan(1_400)
        expect(small.headers["content-encoding"]).toBeUndefined()
      }))

    it.effect("keeps building a form for the others when the client that asked first goes away", () =>
      Effect.gen(function*() {
        const Named = Schema.Struct({ code: Schema.String, padding: Schema.String })
        let builds = 0
        const slow = Effect.sleep("50 millis").pipe(Effect.andThen(Effect.sync(() => {
          builds += 1
          return { code: "SLOW", padding: "x".repeat(4_000) }
        })))
        const ask = (coding: string) =>
          Effect.provideService(cachedJson("application:SLOW", ["applications"], tenantA, Named, () => slow), HttpServerRequest.HttpServerRequest, requestAccepting(coding))
        // The first client leaves while the body is built, another waits for the same build.
        const first = yield* Effect.forkChild(ask("br"))
        const second = yield* Effect.forkChild(ask("br"))
        // Real time: the build runs detached, on the default clock.
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
        yield* Fiber.interrupt(first)
        const answer = yield* Fiber.join(second)
        expect(answer.headers["content-encoding"]).toBe("br")
        expect(JSON.parse(brotliDecompressSync(bytesOf(answer)).toString()).code).toBe("SLOW")
        // And one that leaves while the br form is compressed does not spoil it either.
        const leaving = yield* Effect.forkChild(ask("gzip"))
        yield* Effect.yieldNow
        yield* Fiber.interrupt(leaving)
        const gzip = yield* ask("gzip")
        expect(JSON.parse(gunzipSync(bytesOf(gzip)).toString()).code).toBe("SLOW")
        expect(builds).toBe(1)
      }))

    it.effect("answers a form made in pieces while it is made, as it is and compressed, then from the cache", () =>
      Effect.gen(function*() {
        const pieces = Array.from({ length: 6 }, (_, i) => `${i === 0 ? "[" : ","}${JSON.stringify({ i, padding: "y".repeat(3_000) })}`).concat("]")
        let builds = 0
        const made = () =>
          Effect.sync(() => {
            builds += 1
            return Stream.fromIterable(pieces.map((piece) => Buffer.from(piece)))
          })
        /** The chunks decompressed and passed on, as their young collection is told of them. */
        const passed: Array<number> = []
        const sum = () => passed.reduce((total, bytes) => total + bytes, 0)
        const ask = (coding: string | undefined) =>
          cachedBody("posi", ["applications", "functions"], tenantB, made).pipe(
            Effect.provideService(HttpServerRequest.HttpServerRequest, requestAccepting(coding)),
            Effect.provideService(DecompressedChunks, (bytes: number) => void passed.push(bytes))
          )
        const [plain, br] = yield* Effect.all([ask(undefined), ask("br")], { concurrency: "unbounded" })
        const expected = pieces.join("")
        // Both answered while the body was made: streamed, no length known in advance.
        expect([plain!.body._tag, br!.body._tag]).toEqual(["Stream", "Stream"])
        expect(Buffer.from(yield* Stream.mkUint8Array(streamOf(plain!))).toString()).toBe(expected)
        // Decompressed from the br form as it was made, every chunk told for its collection.
        expect(sum()).toBe(Buffer.byteLength(expected))
        expect(br!.headers["content-encoding"]).toBe("br")
        const streamedBr = yield* Stream.mkUint8Array(streamOf(br!))
        expect(brotliDecompressSync(streamedBr).toString()).toBe(expected)
        // Made once, then held br-compressed: the same br bytes as were streamed, whole; gzip made
        // once from them, and, this answer being small, the identity answer decompressed once and kept.
        const [cachedPlain, cachedBr, gzip, gzipAgain] = [yield* ask(undefined), yield* ask("br"), yield* ask("gzip"), yield* ask("gzip")]
        expect([cachedPlain.body._tag, cachedBr.body._tag, gzip.body._tag]).toEqual(["Uint8Array", "Uint8Array", "Uint8Array"])
        expect(Buffer.from(bytesOf(cachedPlain)).toString()).toBe(expected)
        expect(bytesOf(yield* ask(undefined))).toBe(bytesOf(cachedPlain))
        expect(Buffer.compare(bytesOf(cachedBr), streamedBr)).toBe(0)
        expect(gunzipSync(bytesOf(gzip)).toString()).toBe(expected)
        expect(bytesOf(gzipAgain)).toBe(bytesOf(gzip))
        expect(builds).toBe(1)
        // The gzip form made once from the held br form, decompressed as it went: told as well.
        expect(sum()).toBe(2 * Buffer.byteLength(expected))
      }))

    it.effect("gives each piece's memory back once compressed, and only a piece's", () =>
      Effect.gen(function*() {
        // Pieces of their own buffers (over Node's pool size), as the forests' and posi's makers cut them: 1.1 MB in all, made in pieces (LargeBody).
        const texts = Array.from({ length: 8 }, (_, i) => `${i === 0 ? "[" : ","}${JSON.stringify({ i, padding: "r".repeat(140_000 + i) })}`).concat("]")
        const pieces = texts.map((text) => Buffer.from(text))
        const whole = Buffer.from(texts.join(""))
        const ask = (form: string, made: () => Effect.Effect<Uint8Array | Iterable<Uint8Array>>) =>
          Effect.provideService(cachedBody(form, ["functions"], tenantB, made), HttpServerRequest.HttpServerRequest, requestAccepting("br"))
        const inPieces = yield* ask("released", () => Effect.succeed(pieces))
        expect(brotliDecompressSync(yield* Stream.mkUint8Array(streamOf(inPieces))).toString()).toBe(texts.join(""))
        // Read again from the cache, once made: every piece was released on its way.
        expect(brotliDecompressSync(bytesOf(yield* ask("released", () => Effect.die("made twice")))).toString()).toBe(texts.join(""))
        expect(pieces.filter((piece) => piece.byteLength > 0).length).toBe(1)
        expect(pieces.at(-1)!.toString()).toBe("]")
        // A body made whole may be held elsewhere: it is compressed, never released.
        const answer = yield* ask("whole", () => Effect.succeed(whole))
        expect(brotliDecompressSync(yield* Stream.mkUint8Array(streamOf(answer))).toString()).toBe(texts.join(""))
        expect(whole.byteLength).toBe(Buffer.byteLength(texts.join("")))
      }))

    it.effect("answers a gzip-only client while a form is made, from its br form as that comes", () =>
      Effect.gen(function*() {
        const pieces = Array.from({ length: 6 }, (_, i) => `${i === 0 ? "[" : ","}${JSON.stringify({ i, padding: "g".repeat(3_000) })}`).concat("]")
        const made = () => Effect.succeed(Stream.fromIterable(pieces.map((piece) => Buffer.from(piece))))
        const ask = (coding: string | undefined) =>
          Effect.provideService(cachedBody("posi:gzip", ["applications", "functions"], tenantB, made), HttpServerRequest.HttpServerRequest, requestAccepting(coding))
        const [gzip, plain] = yield* Effect.all([ask("gzip"), ask(undefined)], { concurrency: "unbounded" })
        expect([gzip!.body._tag, plain!.body._tag]).toEqual(["Stream", "Stream"])
        expect(gzip!.headers["content-encoding"]).toBe("gzip")
        expect(gunzipSync(yield* Stream.mkUint8Array(streamOf(gzip!))).toString()).toBe(pieces.join(""))
        expect(Buffer.from(yield* Stream.mkUint8Array(streamOf(plain!))).toString()).toBe(pieces.join(""))
      }))

    it.effect("ends a streamed answer in error when its making fails, and keeps nothing of it", () =>
      Effect.gen(function*() {
        let fail = true
        const pieces = function*() {
          yield Buffer.from("[")
          if (fail) throw new Error("storage down")
          yield Buffer.from("]")
        }
        const streamed = Stream.concat(
          Stream.make(Buffer.from("[")),
          Stream.suspend(() => fail ? Stream.die(new Error("storage down")) : Stream.make(Buffer.from("]")))
        )
        const ask = cachedBody("posi", ["applications", "functions"], tenantA, () => Effect.succeed(streamed))
        const broken = yield* ask
        expect(broken.body._tag).toBe("Stream")
        expect(Exit.isFailure(yield* Effect.exit(Stream.mkUint8Array(streamOf(broken))))).toBe(true)
        fail = false
        const again = yield* ask
        const bytes = again.body._tag === "Stream" ? yield* Stream.mkUint8Array(streamOf(again)) : bytesOf(again)
        expect(Buffer.from(bytes).toString()).toBe("[]")
        // Pieces made in this process that fail before they are large: the request itself fails,
        // no answer begun, and nothing is kept.
        fail = true
        const small = cachedBody("flat", ["functions"], tenantA, () => Effect.sync(pieces))
        expect(Exit.isFailure(yield* Effect.exit(small))).toBe(true)
        fail = false
        expect(Buffer.from(bytesOf(yield* small)).toString()).toBe("[]")
      }))

    it.effect("holds pieces made in this process whole when they stay small, and answers larger ones while they are made", () =>
      Effect.gen(function*() {
        const piecesOf = (count: number, bytes: number) =>
          Array.from({ length: count }, (_, i) => `${i === 0 ? "[" : ","}${JSON.stringify({ i, padding: "p".repeat(bytes) })}${i === count - 1 ? "]" : ""}`)
        let taken = 0
        const counted = (pieces: ReadonlyArray<string>) =>
          function*() {
            for (const piece of pieces) {
              taken += 1
              yield Buffer.from(piece)
            }
          }
        const ask = (form: string, pieces: ReadonlyArray<string>, coding: string | undefined) =>
          Effect.provideService(cachedBody(form, ["functions"], tenantB, () => Effect.sync(counted(pieces))), HttpServerRequest.HttpServerRequest, requestAccepting(coding))

        // Under LargeBody: one body, held as it is, whatever the request accepts.
        const small = piecesOf(4, 3_000)
        const [smallBr, smallPlain] = [yield* ask("pieces:small", small, "br"), yield* ask("pieces:small", small, undefined)]
        expect([smallBr.body._tag, smallPlain.body._tag]).toEqual(["Uint8Array", "Uint8Array"])
        expect(brotliDecompressSync(bytesOf(smallBr)).toString()).toBe(small.join(""))
        expect(Buffer.from(bytesOf(smallPlain)).toString()).toBe(small.join(""))
        expect(taken).toBe(small.length)

        // Over it: answered while the rest is still to be made, then held compressed.
        taken = 0
        const large = piecesOf(40, 64 * 1024)
        const following = yield* ask("pieces:large", large, "br")
        expect(following.body._tag).toBe("Stream")
        expect(taken).toBeLessThan(large.length)
        expect(brotliDecompressSync(yield* Stream.mkUint8Array(streamOf(following))).toString()).toBe(large.join(""))
        expect(taken).toBe(large.length)
        const held = yield* ask("pieces:large", large, "br")
        expect(held.body._tag).toBe("Uint8Array")
        expect(brotliDecompressSync(bytesOf(held)).toString()).toBe(large.join(""))
        expect(Buffer.from(bytesOf(yield* ask("pieces:large", large, undefined))).toString()).toBe(large.join(""))
        expect(taken).toBe(large.length)
      }))

    it.effect("holds a walk's pieces whole when they stay small, and answers larger ones while they are read", () =>
      Effect.gen(function*() {
        const piecesOf = (count: number, bytes: number) =>
          Array.from({ length: count }, (_, i) => `${i === 0 ? "[" : ","}${JSON.stringify({ i, padding: "p".repeat(bytes) })}${i === count - 1 ? "]" : ""}`)
        // The second half read only once `gate` opens: what is answered before was not waited for.
        const gate = yield* Deferred.make<void>()
        const read = (pieces: ReadonlyArray<string>, gated: boolean) => {
          const half = Math.floor(pieces.length / 2)
          const bytes = (from: ReadonlyArray<string>) => Stream.fromIterable(from.map((piece) => Buffer.from(piece)))
          return new MayBeSmall(Stream.concat(bytes(pieces.slice(0, half)), Stream.unwrap(Effect.as(gated ? Deferred.await(gate) : Effect.void, bytes(pieces.slice(half))))))
        }
        const ask = (form: string, made: () => MayBeSmall<never>, coding: string | undefined) =>
          Effect.provideService(cachedBody(form, ["functions"], tenantB, () => Effect.sync(made)), HttpServerRequest.HttpServerRequest, requestAccepting(coding))

        // Under LargeBody: one body, held as it is, compressed at the small bodies' settings.
        const small = piecesOf(4, 3_000)
        const [smallBr, smallPlain] = [yield* ask("walk:small", () => read(small, false), "br"), yield* ask("walk:small", () => read(small, false), undefined)]
        expect([smallBr.body._tag, smallPlain.body._tag]).toEqual(["Uint8Array", "Uint8Array"])
        expect(Buffer.from(bytesOf(smallBr))).toEqual(brotliCompressSync(Buffer.from(small.join("")), {
          params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT, [constants.BROTLI_PARAM_SIZE_HINT]: Buffer.byteLength(small.join("")) }
        }))
        expect(Buffer.from(bytesOf(smallPlain)).toString()).toBe(small.join(""))
        // An empty forest: under the size worth compressing, answered as it is.
        const empty = yield* ask("walk:empty", () => new MayBeSmall(Stream.make(Buffer.from("[]"))), "br")
        expect({ coding: empty.headers["content-encoding"], body: Buffer.from(bytesOf(empty)).toString() }).toEqual({ coding: undefined, body: "[]" })

        // Over it: answered while the rest is still to be read, then held compressed.
        const large = piecesOf(40, 64 * 1024)
        const following = yield* ask("walk:large", () => read(large, true), "br")
        expect(following.body._tag).toBe("Stream")
        yield* Deferred.succeed(gate, undefined)
        expect(brotliDecompressSync(yield* Stream.mkUint8Array(streamOf(following))).toString()).toBe(large.join(""))
        const held = yield* ask("walk:large", () => read(large, true), "br")
        expect(held.body._tag).toBe("Uint8Array")
        expect(brotliDecompressSync(bytesOf(held)).toString()).toBe(large.join(""))
      }))

    it.effect("ends the answers that follow a making in error, gzip made from it included, when the making fails midway", () =>
      Effect.gen(function*() {
        const gate = yield* Deferred.make<void>()
        const made = () =>
          Effect.succeed(Stream.concat(
            Stream.make(Buffer.from(`[${JSON.stringify({ padding: "f".repeat(3_000) })}`)),
            Stream.fromEffect(Effect.andThen(Deferred.await(gate), Effect.fail(new Error("storage down"))))
          ))
        const ask = (coding: string | undefined) =>
          Effect.provideService(cachedBody("posi:midway", ["applications", "functions"], tenantA, made), HttpServerRequest.HttpServerRequest, requestAccepting(coding))
        const answers = yield* Effect.all([ask("br"), ask("gzip"), ask(undefined)], { concurrency: "unbounded" })
        expect(answers.map((answer) => answer.body._tag)).toEqual(["Stream", "Stream", "Stream"])
        const read = answers.map((answer) => Effect.runFork(Stream.mkUint8Array(streamOf(answer))))
        yield* Deferred.succeed(gate, undefined)
        for (const reading of read) {
          // Told the making's own failure, not left waiting for bytes that will never come (waited
          // for on the live clock: such a reader fails this test in seconds, not at its timeout).
          const exit = yield* Effect.promise(() => Effect.runPromise(Effect.timeoutOption(Fiber.await(reading), "10 seconds")))
          expect(Option.isSome(exit) && Exit.isFailure(exit.value) && Cause.squash(exit.value.cause)).toMatchObject({ message: "storage down" })
        }
      }))

    it.effect("keys a tenant the same whatever the case of its id", () =>
      Effect.gen(function*() {
        const Named = Schema.Struct({ code: Schema.String })
        yield* cachedJson("application:CASE", ["applications"], tenantA, Named, () => Effect.succeed({ code: "first" }))
        let made = 0
        const again = yield* cachedJson("application:CASE", ["applications"], tenantA.toUpperCase(), Named, () => {
          made++
          return Effect.succeed({ code: "second" })
        })
        expect(JSON.parse(new TextDecoder().decode(bytesOf(again)))).toEqual({ code: "first" })
        // A hit does not even make the read (a traced use case costs a stack trace per call).
        expect(made).toBe(0)
      }))

    it.effect("answers a failed read (an unknown application's 404) as it failed, and keeps nothing of it", () =>
      Effect.gen(function*() {
        const Named = Schema.Struct({ code: Schema.String })
        const missing = yield* Effect.flip(cachedJson("application:NEW", ["applications"], tenantA, Named, () => Effect.fail(new NotFound({ detail: "No application with code 'NEW'." }))))
        expect(missing).toBeInstanceOf(NotFound)
        const found = yield* cachedJson("application:NEW", ["applications"], tenantA, Named, () => Effect.succeed({ code: "NEW" }))
        expect(JSON.parse(new TextDecoder().decode(bytesOf(found)))).toEqual({ code: "NEW" })
      }))
  })
})

describe("encoded read cache budget", () => {
  // One single-node tree encodes to about 190 bytes: two of them do not fit in the 300 of 400
  // left for answers (a quarter goes to the application fragments).
  const SmallCache = Layer.mergeAll(CountingFunctions, EncodedReadCache.fixed(400), ReadFreshness.layer).pipe(Layer.provideMerge(MemoryLayer))

  layer(SmallCache)((it) => {
    it.effect("drops the least recently used body when the next one does not fit", () =>
      Effect.gen(function*() {
        yield* createFunction(tenantA, fnInput({ code: "A", name: "a" }))
        yield* createFunction(tenantB, fnInput({ code: "B", name: "b" }))
        const start = probe.reads
        yield* tree(tenantA)
        yield* tree(tenantA)
        expect(probe.reads - start).toBe(1)
        yield* tree(tenantB)
        yield* tree(tenantB)
        expect(probe.reads - start).toBe(2)
        expect(codes(yield* tree(tenantA))).toEqual(["A"])
        expect(probe.reads - start).toBe(3)
      }))
  })
})

describe("encoded read cache holding", () => {
  // A large answer's JSON compresses to a few percent of it: held as it is, it would not fit this
  // budget at all (4.4 MB of JSON; its br and gzip forms together about 0.8 MB, within the
  // answers' three quarters of 2 MiB).
  const budget = 2 * LargeBody
  /** The chunks the cache decompressed and passed on, as their young collection is told of them. */
  const passed: Array<number> = []
  const Holding = Layer.mergeAll(
    CountingFunctions,
    EncodedReadCache.fixed(budget),
    ReadFreshness.layer,
    Layer.succeed(DecompressedChunks, (bytes: number) => void passed.push(bytes))
  ).pipe(Layer.provideMerge(MemoryLayer))
  const json = JSON.stringify(Array.from({ length: 70_000 }, (_, i) => ({ code: `F${i}`, name: `function ${i}`, parentCode: i === 0 ? null : `F${i - 1}` })))

  layer(Holding)((it) => {
    it.effect("holds a large answer br-compressed only, and answers every coding from it", () =>
      Effect.gen(function*() {
        expect(json.length).toBeGreaterThan(IdentityKeptBelow)
        let builds = 0
        const made = () =>
          Effect.sync(() => {
            builds += 1
            return Buffer.from(json)
          })
        const ask = (coding: string | undefined) =>
          Effect.provideService(cachedBody("large", ["functions"], tenantA, made), HttpServerRequest.HttpServerRequest, requestAccepting(coding))
        const br = yield* ask("br")
        expect(br.headers["content-encoding"]).toBe("br")
        const brBytes = br.body._tag === "Stream" ? yield* Stream.mkUint8Array(streamOf(br)) : bytesOf(br)
        expect(brotliDecompressSync(brBytes).toString()).toBe(json)
        expect(brBytes.byteLength).toBeLessThan(budget)
        // Too large to keep decompressed: decompressed as it goes, its length known (no chunked framing).
        for (let i = 0; i < 2; i++) {
          const plain = yield* ask(undefined)
          expect(plain.headers["content-encoding"]).toBeUndefined()
          expect(plain.body._tag).toBe("Stream")
          expect(lengthOf(plain)).toBe(Buffer.byteLength(json))
          expect(Buffer.from(yield* Stream.mkUint8Array(streamOf(plain))).toString()).toBe(json)
        }
        // Every chunk decompressed for them is told, for its collection: nothing else frees it soon.
        const sum = () => passed.reduce((total, bytes) => total + bytes, 0)
        expect(sum()).toBe(2 * Buffer.byteLength(json))
        expect(passed.length).toBeGreaterThan(10)
        const gzip = yield* ask("gzip")
        expect(gzip.headers["content-encoding"]).toBe("gzip")
        expect(gunzipSync(bytesOf(gzip)).toString()).toBe(json)
        // The gzip form is made from the br form decompressed as it goes: those chunks as well.
        expect(sum()).toBe(3 * Buffer.byteLength(json))
        expect(Buffer.compare(bytesOf(yield* ask("br")), Buffer.from(brBytes))).toBe(0)
        // Kept within a budget its JSON alone exceeds.
        expect(builds).toBe(1)
      }))
  })
})

describe("encoded read cache idleness", () => {
  const clock = { now: 0 }
  const Idle = Layer.mergeAll(CountingFunctions, EncodedReadCache.fixed(1024 * 1024, { now: () => clock.now }), ReadFreshness.layer).pipe(
    Layer.provideMerge(MemoryLayer)
  )

  layer(Idle)((it) => {
    it.effect("drops an answer nobody has read for a minute, and keeps one read since", () =>
      Effect.gen(function*() {
        yield* createFunction(tenantA, fnInput({ code: "A", name: "a" }))
        const start = probe.reads
        yield* tree(tenantA)
        clock.now += IdleEntryMs - 1_000
        yield* tree(tenantA)
        clock.now += IdleEntryMs - 1_000
        yield* tree(tenantA)
        // Read within a minute each time: still the first build.
        expect(probe.reads - start).toBe(1)
        clock.now += IdleEntryMs + 1
        expect(codes(yield* tree(tenantA))).toEqual(["A"])
        expect(probe.reads - start).toBe(2)
      }))
  })
})

describe("encoded read cache metrics", () => {
  // Not 0: the cache takes a start time of 0 for "no time-to-live".
  const clock = { now: 1_000 }
  const metrics = MetricsLive("referential").pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({}))))
  // 300 bytes for answers, 100 for fragments: one single-node tree (about 190 bytes) fits, two do not.
  const Measured = Layer.mergeAll(CountingFunctions, EncodedReadCache.fixed(400, { now: () => clock.now }), ReadFreshness.layer).pipe(
    Layer.provideMerge(MemoryLayer),
    Layer.provideMerge(metrics)
  )
  const scraped = Effect.map(Effect.flatMap(Metrics, (m) => m.exposition), parsePrometheusText)
  const lookups = "portfolio_referential_read_cache_lookups_total"
  const evictions = "portfolio_referential_read_cache_evictions_total"

  layer(Measured)((it) => {
    it.effect("counts reads by what they found, entries dropped by why, and what each share holds against its budget", () =>
      Effect.gen(function*() {
        // Every series from the start, at 0.
        let families = yield* scraped
        expect(samplesOf(families, lookups).map((s) => [s.labels["result"], s.value]).sort()).toEqual([["hit", 0], ["miss", 0], ["stale", 0]])
        expect(samplesOf(families, evictions).map((s) => `${s.labels["share"]} ${s.labels["reason"]} ${s.value}`).sort())
          .toEqual(["answers budget 0", "answers idle 0", "fragments budget 0", "fragments idle 0"])
        yield* createFunction(tenantA, fnInput({ code: "A", name: "a" }))
        yield* createFunction(tenantB, fnInput({ code: "B", name: "b" }))
        yield* tree(tenantA)
        yield* tree(tenantA)
        families = yield* scraped
        expect(sumOf(families, lookups, { result: "miss" })).toBe(1)
        expect(sumOf(families, lookups, { result: "hit" })).toBe(1)
        const held = sumOf(families, "portfolio_referential_read_cache_size_bytes", { share: "answers" })
        expect(held).toBeGreaterThan(100)
        expect(held).toBeLessThanOrEqual(300)
        expect(sumOf(families, "portfolio_referential_read_cache_size_bytes", { share: "fragments" })).toBe(0)
        expect(sumOf(families, "portfolio_referential_read_cache_limit_bytes", { share: "answers" })).toBe(300)
        expect(sumOf(families, "portfolio_referential_read_cache_limit_bytes", { share: "fragments" })).toBe(100)

        // The other tenant's tree pushes the first out.
        yield* tree(tenantB)
        families = yield* scraped
        expect(sumOf(families, evictions, { share: "answers", reason: "budget" })).toBe(1)
        expect(sumOf(families, lookups, { result: "miss" })).toBe(2)

        // A write outdates the entry: the next read finds it stale. Its tree of two nodes is
        // larger than the whole share: not kept, and counted as let go for the budget.
        yield* createFunction(tenantB, fnInput({ code: "B2", name: "b2" }))
        yield* tree(tenantB)
        families = yield* scraped
        expect(sumOf(families, lookups, { result: "stale" })).toBe(1)
        expect(sumOf(families, evictions, { share: "answers", reason: "budget" })).toBe(2)
        expect(sumOf(families, "portfolio_referential_read_cache_size_bytes", { share: "answers" })).toBe(0)

        // Unread for a minute: dropped as idle, and read again as a miss.
        yield* tree(tenantA)
        expect(sumOf(yield* scraped, evictions, { reason: "idle" })).toBe(0)
        clock.now += IdleEntryMs + 1
        yield* tree(tenantA)
        families = yield* scraped
        expect(sumOf(families, evictions, { share: "answers", reason: "idle" })).toBe(1)
        expect(sumOf(families, lookups, { result: "miss" })).toBe(4)
        expect(sumOf(families, lookups)).toBe(6)
      }))
  })
})
