import { Application, BusinessFunction, ChangeLogEntry, FunctionTreeNode, LinkedApplication, PosiTreeNode, TrackedFields } from "@portfolio/domain"
import { DateTime, Effect, Option, Schema, Stream } from "effect"
import { describe, expect, it, vi } from "vitest"
import { applicationJsons, arrayPieces, changeJsons, changesJson, flatJsonOfWalk, functionJsons, holeCodes, linkedApplicationJsons, posiPieces, PosiPieceBytes, posiTemplate, posiTemplateBytes, treeJson, packedByCode, unpackedByCode } from "../../src/adapters/http/WireJson.js"
import type { ApplicationRecord } from "../../src/domain/ApplicationRecord.js"
import { toApplication } from "../../src/domain/ApplicationView.js"
import type { FunctionFields, FunctionRecord } from "../../src/domain/FunctionRecord.js"
import { generateDemoReferential } from "../../src/usecases/DemoReferential.js"
import { flatList, locatedWalkOf, nestedTree, posiOf, walkOf } from "../support/Forests.js"

/** What the schema path answers: the definition the direct writers must match byte for byte. */
const bySchema = <A, I>(schema: Schema.Codec<A, I>, value: A) => JSON.stringify(Schema.encodeSync(schema)(value))

const tenantId = "6a0f4c2e-9d1b-4e57-8f3a-2b7c9e1d5a40"
const now = DateTime.makeUnsafe("2026-11-29T16:00:00.000Z")

/** The records the reads are made of, joined as the repository joins them. */
const referentialOf = (applications: ReadonlyArray<ApplicationRecord>, functions: ReadonlyArray<FunctionFields>, links: ReadonlyArray<{ functionId: string; applicationCode: string }>) => {
  const byCode = new Map(applications.map((application) => [application.code, application]))
  const codesOf = new Map<string, Array<string>>()
  for (const link of links) codesOf.set(link.functionId, [...(codesOf.get(link.functionId) ?? []), link.applicationCode].sort())
  const records: Array<FunctionRecord> = functions.map((fn) => ({ ...fn, applicationCodes: codesOf.get(fn.id) ?? [] }))
  const linked = new Map(applications.map((application) => {
    const parent = application.parentCode === null ? undefined : byCode.get(application.parentCode)
    return [application.code, new LinkedApplication({
      code: application.code,
      name: application.name,
      parentCode: application.parentCode,
      parentName: parent?.name ?? null,
      criticality: application.criticality
    })]
  }))
  return { applications: applications.map(toApplication), records, linked }
}

const text = (bytes: Uint8Array) => Buffer.from(bytes).toString("utf8")
const made = (pieces: Stream.Stream<Uint8Array>) => [...Effect.runSync(Stream.runCollect(pieces))]
/** Posi's template, from the records' walk in batches of `batch`. */
const templateOf = (records: ReadonlyArray<FunctionRecord>, blockBytes?: number, batch?: number) =>
  Effect.runSync(posiTemplate(walkOf(records, batch), blockBytes))
const whole = (pieces: Iterable<Uint8Array>) => Buffer.concat([...pieces])

/** The list as ApplicationList.ts makes it: each application's JSON, in pieces of about `bytes`. */
const inPieces = (applications: ReadonlyArray<Application>, bytes: number) => text(whole(arrayPieces(applicationJsons(applications), bytes)))

/** Posi's pieces, filled from `batches` of the linked applications. */
const posiFrom = (template: Uint8Array, batches: ReadonlyArray<ReadonlyArray<LinkedApplication>>, pieceBytes?: number) =>
  Effect.runSync(Stream.runCollect(posiPieces(template, Stream.fromIterable(batches.map(linkedApplicationJsons)), pieceBytes)))

/** The batches as the repository gives them: the applications posi's first piece shows, then the others. */
const asRead = (template: Uint8Array, linked: ReadonlyMap<string, LinkedApplication>) => {
  const first = new Set(holeCodes(template, PosiPieceBytes))
  return [[...linked.values()].filter((a) => first.has(a.code)), [...linked.values()].filter((a) => !first.has(a.code))]
}

const expectSameBytes = (referential: ReturnType<typeof referentialOf>) => {
  const list = bySchema(Schema.Array(Application), referential.applications)
  for (const bytes of [1, 700, 256 * 1024]) expect(inPieces(referential.applications, bytes)).toBe(list)
  const tree = nestedTree(referential.records)
  const treeBySchema = bySchema(Schema.Array(FunctionTreeNode), tree)
  const flat = flatList(referential.records)
  const flatBySchema = bySchema(Schema.Array(BusinessFunction), flat)
  // Written as the walk comes, in batches of every size: a batch's text at a time, and a last
  // piece that closes what is open, never the whole answer in one buffer.
  for (const batch of [1, 7, 1_000]) {
    const treePieces = made(treeJson(walkOf(referential.records, batch)))
    expect(text(Buffer.concat(treePieces))).toBe(treeBySchema)
    expect(treePieces.length).toBe(Math.ceil(referential.records.length / batch) + 1)
    const flatPieces = made(flatJsonOfWalk(locatedWalkOf(referential.records, batch)))
    expect(text(Buffer.concat(flatPieces))).toBe(flatBySchema)
    expect(flatPieces.length).toBe(Math.ceil(referential.records.length / batch) + 1)
  }
  // A search's result packed (its pages and its whole answer are made from it): each function's
  // JSON as the schema writes it, and the codes, in order; and one by one for a page read as asked.
  const byCode = unpackedByCode(packedByCode(flat))
  expect(byCode.count).toBe(flat.length)
  expect(flat.map((_, i) => byCode.codeAt(i))).toEqual(flat.map((fn) => fn.code))
  // Codes of several bytes each in UTF-8, and none: offsets are in bytes.
  const wide = flat.slice(0, 3).map((fn, i) => ({ ...fn, code: ["ÉTÉ-1", "ORD-\u{1F600}", "\uFF21"][i]! }))
  const wideByCode = unpackedByCode(packedByCode(wide))
  expect(Array.from({ length: wideByCode.count }, (_, i) => wideByCode.codeAt(i))).toEqual(wide.map((fn) => fn.code))
  expect(wide.map((_, i) => text(wideByCode.item(i)))).toEqual(functionJsons(wide).map(text))
  expect(unpackedByCode(packedByCode([])).count).toBe(0)
  expect(flat.map((_, i) => text(byCode.item(i)))).toEqual(flat.map((fn) => bySchema(BusinessFunction, fn)))
  for (const bytes of [1, 700, 256 * 1024]) expect(text(whole(arrayPieces(flat.map((_, i) => byCode.item(i)), bytes)))).toBe(flatBySchema)
  expect(functionJsons(flat).map(text)).toEqual(flat.map((fn) => bySchema(BusinessFunction, fn)))
  const posi = posiOf(tree, referential.linked)
  const template = templateOf(referential.records)
  const linked = [...referential.linked.values()]
  const bySeven = Array.from({ length: Math.ceil(linked.length / 7) }, (_, i) => linked.slice(i * 7, (i + 1) * 7)).reverse()
  const posiBySchema = bySchema(Schema.Array(PosiTreeNode), posi)
  for (const batches of [[linked], asRead(template, referential.linked), bySeven, [[], linked, []]]) {
    expect(text(Buffer.concat(posiFrom(template, batches)))).toBe(posiBySchema)
  }
  // Pieces cut at every kind of place: a byte at a time (a small posi only: a piece is a stream's
  // element), in the text, at a hole, at the end.
  const small = Buffer.byteLength(posiBySchema) < 64 * 1024
  for (const pieceBytes of [...(small ? [1, 7] : []), 700, Buffer.byteLength(posiBySchema)]) {
    const pieces = posiFrom(template, bySeven, pieceBytes)
    expect(text(Buffer.concat(pieces))).toBe(posiBySchema)
    expect(pieces.every((piece) => piece.byteLength > 0)).toBe(true)
  }
  // The template's blocks cut at every kind of place too, inside holes and in the text.
  for (const blockBytes of [...(small ? [1] : []), 97, 4096]) {
    const inBlocks = templateOf(referential.records, blockBytes)
    expect(posiTemplateBytes(inBlocks)).toBe(posiTemplateBytes(template))
    expect(text(Buffer.concat(posiFrom(inBlocks, bySeven, 700)))).toBe(posiBySchema)
  }
}

describe("the whole-tenant answers written directly", () => {
  it("are the schema's bytes for generated referentials of every shape", () => {
    // The first is large enough for the flat lists to go in several slices.
    for (const [seed, applications, functions] of [[1, 1_200, 2_500], [42, 300, 900], [7_919, 300, 900]] as const) {
      const demo = generateDemoReferential(tenantId, { applications, functions, maxDepth: 6, seed }, now)
      expectSameBytes(referentialOf(demo.applications, demo.functions, demo.links))
    }
  })

  it("are the schema's bytes for edge values: escapes, non-ASCII text, extreme numbers, empty forests", () => {
    expectSameBytes(referentialOf([], [], []))
    const demo = generateDemoReferential(tenantId, { applications: 4, functions: 6, maxDepth: 3, seed: 3 }, now)
    const texts = ["quote \" backslash \\ slash /", "é ü ß 漢字 🚀", "line\u2028separator\u2029", "tab\tnew\nline", "<script>&amp;</script>", ""]
    const applications = demo.applications.map((application, i): ApplicationRecord => ({
      ...application,
      name: texts[i % texts.length]!,
      description: i % 2 === 0 ? null : texts[(i + 1) % texts.length]!,
      rtoHours: [0, 1.5, 1_000_000, null][i % 4]!,
      rpoHours: [0.25, null, 24, 1e-7][i % 4]!,
      licenseCost: [0, Number.MAX_SAFE_INTEGER, null, 12_345][i % 4]!,
      legacyAnnualCost: [null, 7, 0, null][i % 4]!,
      roleAssignments: [{ role: "TECH_LEAD", contact: texts[i % texts.length]! }, { role: "PRODUCT_OWNER", contact: "po@example.com" }],
      criticality: (["MISSION_CRITICAL", "IMPORTANT", "NOMINAL", "LOW"] as const)[i % 4]!,
      createdAt: DateTime.makeUnsafe(Date.UTC(1999, 11, 31, 23, 59, 59, 1)),
      updatedAt: DateTime.makeUnsafe(Date.UTC(2038, 0, 19, 3, 14, 7, 999))
    }))
    const functions = demo.functions.map((fn, i) => ({ ...fn, name: texts[i % texts.length]!, description: i % 3 === 0 ? null : texts[(i + 2) % texts.length]! }))
    expectSameBytes(referentialOf(applications, functions, demo.links))
  })

  it("a change log's page, whole and entry by entry, is the schema's bytes, escapes, nulls and times included", () => {
    const texts = ["quote \" backslash \\ slash /", "é ü ß 漢字 🚀", "line\u2028separator\u2029", "tab\tnew\nline", "<script>&amp;</script>", ""]
    const entries = TrackedFields.map((field, i) =>
      new ChangeLogEntry({
        id: `6a0f4c2e-9d1b-4e57-8f3a-2b7c9e1d5a${String(i).padStart(2, "0")}`,
        applicationCode: `APP-${i}`,
        field,
        oldValue: i % 3 === 0 ? null : texts[i % texts.length]!,
        newValue: i % 4 === 1 ? null : texts[(i + 1) % texts.length]!,
        changedBy: i % 2 === 0 ? "operator:ci" : texts[(i + 2) % texts.length]!,
        changedAt: DateTime.makeUnsafe(Date.UTC(1999 + 3 * i, i, 1 + i, i, 59, 59, i * 91))
      }))
    const schemaBytes = bySchema(Schema.Array(ChangeLogEntry), entries)
    expect(changesJson(entries)).toBe(schemaBytes)
    expect(changesJson([])).toBe(bySchema(Schema.Array(ChangeLogEntry), []))
    expect(`[${changeJsons(entries).map((json) => Buffer.from(json).toString("utf8")).join(",")}]`).toBe(schemaBytes)
  })

  it("posi's first piece needs only the applications it shows, and a link to none read fails", () => {
    const demo = generateDemoReferential(tenantId, { applications: 1_200, functions: 2_500, maxDepth: 6, seed: 1 }, now)
    const referential = referentialOf(demo.applications, demo.functions, demo.links)
    const template = templateOf(referential.records)
    const whole = bySchema(Schema.Array(PosiTreeNode), posiOf(nestedTree(referential.records), referential.linked))
    expect(Buffer.byteLength(whole)).toBeGreaterThan(3 * PosiPieceBytes)
    // Kept deflated: the text is several blocks, each a fraction of its size.
    expect(posiTemplateBytes(template)).toBeGreaterThan(2 * 256 * 1024)
    expect(template.byteLength).toBeLessThan(posiTemplateBytes(template) / 4)
    const [first, others] = asRead(template, referential.linked)
    expect(first!.length).toBeGreaterThan(0)
    expect(others!.length).toBeGreaterThan(0)
    // The second batch never comes: the first piece is made from the first alone.
    const firstPiece = Effect.runSync(Stream.runHead(posiPieces(template, Stream.concat(Stream.make(linkedApplicationJsons(first!)), Stream.die("the other applications were not read")))))
    const piece = text(Option.getOrThrow(firstPiece))
    expect(piece.length).toBeGreaterThan(0)
    expect(whole.startsWith(piece)).toBe(true)
    // A template within one piece reads every application at once.
    expect(holeCodes(template, posiTemplateBytes(template))).toEqual([])
    expect(holeCodes(template, posiTemplateBytes(template) - 1).length).toBeGreaterThan(first!.length)
    // Pieces of PosiPieceBytes, cut in the text or after the object that reaches the size.
    const pieces = posiFrom(template, [[...referential.linked.values()]])
    const largestObject = Math.max(...[...referential.linked.values()].map((a) => Buffer.byteLength(JSON.stringify(Schema.encodeSync(LinkedApplication)(a)))))
    for (const made of pieces.slice(0, -1)) {
      expect(made.byteLength).toBeGreaterThanOrEqual(PosiPieceBytes)
      expect(made.byteLength).toBeLessThan(PosiPieceBytes + largestObject)
    }
    expect(pieces.at(-1)!.byteLength).toBeLessThan(PosiPieceBytes + largestObject)
    // Each block is inflated into one buffer of its own, and nothing more: the pieces and the
    // blocks are the only large buffers a filling allocates.
    const packed = Buffer.from(template.buffer, template.byteOffset, template.byteLength)
    const blockLengths = Array.from({ length: packed.readUInt32LE(4) }, (_, i) => packed.readUInt32LE(8 + 8 * i))
    expect(blockLengths.length).toBeGreaterThan(2)
    const large = 128 * 1024
    const allocations = vi.spyOn(Buffer, "allocUnsafe")
    const filled = posiFrom(template, [[...referential.linked.values()]])
    const allocated = allocations.mock.calls.filter(([size]) => size >= large).length
    allocations.mockRestore()
    expect(allocated).toBe(filled.filter((piece) => piece.byteLength >= large).length + blockLengths.filter((length) => length + 1 >= large).length)
    // The holes are found as the template is made and kept in it (counted by the cache): reading
    // them inflates nothing.
    const fresh = templateOf(referential.records, undefined, 7)
    const reading = vi.spyOn(Buffer, "allocUnsafe")
    expect(holeCodes(fresh, PosiPieceBytes)).toEqual(holeCodes(template, PosiPieceBytes))
    const inflatedToRead = reading.mock.calls.filter(([size]) => size >= large).length
    reading.mockRestore()
    expect(inflatedToRead).toBe(0)
    // A forest of many roots (every function one) is cut into the same blocks.
    const flatRecords = referential.records.map((record) => ({ ...record, parentId: null }))
    const roots = nestedTree(flatRecords)
    expect(roots.length).toBe(referential.records.length)
    expect(text(Buffer.concat(posiFrom(templateOf(flatRecords), [[...referential.linked.values()]])))).toBe(bySchema(Schema.Array(PosiTreeNode), posiOf(roots, referential.linked)))
    // A template without a hole (no function linked) is cut as well.
    const unlinkedRecords = referential.records.map((record) => ({ ...record, applicationCodes: [] }))
    const unlinked = bySchema(Schema.Array(PosiTreeNode), posiOf(nestedTree(unlinkedRecords), referential.linked))
    const bare = posiFrom(templateOf(unlinkedRecords), [])
    expect(bare.length).toBe(Math.ceil(Buffer.byteLength(unlinked) / PosiPieceBytes))
    expect(text(Buffer.concat(bare))).toBe(unlinked)
    // Every application but one: the answer is not made.
    const [absent, ...missing] = [...referential.linked.values()].filter((application) => holeCodes(template, posiTemplateBytes(template) - 1).includes(application.code))
    expect(() => posiFrom(template, [missing])).toThrow(`posi links ${absent!.code}, which is not among the applications read`)
    // Named even when the pieces before it were made from other batches.
    expect(() => posiFrom(template, [missing.slice(0, 10), missing.slice(10)], 64)).toThrow(`posi links ${absent!.code}, which is not among the applications read`)
  })
})
