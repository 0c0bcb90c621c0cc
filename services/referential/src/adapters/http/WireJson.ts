import type { Application, BusinessFunction, ChangeLogEntry, LinkedApplication } from "@portfolio/domain"
import { DateTime, Effect, Stream } from "effect"
import type { LocatedFunction, PlacedFunction } from "../../domain/FunctionRecord.js"
import { treeWalker } from "../../domain/FunctionForest.js"
import { deflateRawSync, inflateRawSync } from "node:zlib"
import { releaseNow } from "@portfolio/platform/runtime"

/**
 * The JSON of the whole-tenant answers (the application list, the function tree, the flat list,
 * posi) and of the change log, made without the schemas: exactly the bytes of `JSON.stringify(Schema.encodeSync(S)(value))`
 * for their schemas in libs/domain, which test/unit/WireJson.test.ts checks on generated
 * referentials and on edge values. Each value is copied into a plain object with the schema's keys
 * in the schema's order and its encoded values (times as ISO strings), then the whole answer goes
 * through one JSON.stringify, which escapes every string as the schema path does. The schema's
 * encoding walks every node through its transformations and cost more than reading the forest
 * (measured at 25,000 functions: 340 ms for the tree, 580 for posi, against 60 and 100 for
 * JSON.stringify alone).
 */
const iso = (value: DateTime.Utc) => DateTime.formatIso(value)

/** The fields every form of a tree node starts with, in the schemas' order. */
const nodeHead = (node: PlacedFunction) => ({
  id: node.id,
  code: node.code,
  name: node.name,
  description: node.description,
  parentId: node.parentId,
  level: node.level,
  applicationCodes: node.applicationCodes,
  createdAt: iso(node.createdAt),
  updatedAt: iso(node.updatedAt)
})

const linkedApplication = (application: LinkedApplication) => ({
  code: application.code,
  name: application.name,
  parentCode: application.parentCode,
  parentName: application.parentName,
  criticality: application.criticality
})

/** A function of the flat list: its fields, its level and its path. */
const businessFunction = (fn: Omit<BusinessFunction, "_tag">) => ({
  id: fn.id,
  code: fn.code,
  name: fn.name,
  description: fn.description,
  parentId: fn.parentId,
  level: fn.level,
  path: fn.path,
  applicationCodes: fn.applicationCodes,
  createdAt: iso(fn.createdAt),
  updatedAt: iso(fn.updatedAt)
})

const application = (app: Application) => ({
  code: app.code,
  name: app.name,
  description: app.description,
  parentCode: app.parentCode,
  status: app.status,
  dataClassification: app.dataClassification,
  criticality: app.criticality,
  rtoHours: app.rtoHours,
  rpoHours: app.rpoHours,
  regulations: app.regulations,
  roleAssignments: app.roleAssignments,
  licenseCost: app.licenseCost,
  supportCost: app.supportCost,
  infraCost: app.infraCost,
  staffCost: app.staffCost,
  annualCost: app.annualCost,
  applicationVip: app.applicationVip,
  contactIT: app.contactIT,
  contactMetier: app.contactMetier,
  createdAt: iso(app.createdAt),
  updatedAt: iso(app.updatedAt)
})

const Open = Buffer.from("[")
const Comma = Buffer.from(",")
const Close = Buffer.from("]")
const EmptyArray = Buffer.from("[]")

/**
 * A JSON array written a batch at a time as the batches come: "[" before the first batch's text,
 * `between` before each other's, then `end()` and "]"; "[]" when none comes.
 */
const jsonArrayOfBatches = <A, E, R>(
  batches: Stream.Stream<ReadonlyArray<A>, E, R>,
  text: (batch: ReadonlyArray<A>) => string,
  between: string,
  end: () => string
): Stream.Stream<Uint8Array, E, R> =>
  Stream.suspend(() => {
    let started = false
    return Stream.concat(
      Stream.map(Stream.filter(batches, (batch) => batch.length > 0), (batch) => {
        const written = `${started ? between : "["}${text(batch)}`
        started = true
        return Buffer.from(written)
      }),
      Stream.fromEffect(Effect.sync(() => started ? Buffer.from(`${end()}]`) : EmptyArray))
    )
  })

/**
 * A forest's nested JSON from its walk in tree order, a batch's text at a time: each function's
 * object opened by `open` (its fields, then `"children":[`) and closed (`]}`) once its subtree is
 * written. Only the path to the current function is held (domain/FunctionForest.ts, `treeWalker`).
 */
const nestedJson = <E, R>(walk: Stream.Stream<ReadonlyArray<PlacedFunction>, E, R>, open: (fn: PlacedFunction) => string): Stream.Stream<Uint8Array, E, R> =>
  Stream.suspend(() => {
    const walker = treeWalker()
    const node = (fn: PlacedFunction) => {
      const { afterSibling, closes } = walker.next(fn)
      return `${"]}".repeat(closes)}${afterSibling ? "," : ""}${open(fn)}`
    }
    return jsonArrayOfBatches(walk, (batch) => batch.map(node).join(""), "", () => "]}".repeat(walker.end()))
  })

/** `{...head, children}` as JSON.stringify writes it: the head without its "}". */
const treeNodeOpen = (fn: PlacedFunction) => `${JSON.stringify(nodeHead(fn)).slice(0, -1)},"children":[`

/** The function tree's JSON from the forest's walk, a batch at a time. */
export const treeJson = <E, R>(walk: Stream.Stream<ReadonlyArray<PlacedFunction>, E, R>) => nestedJson(walk, treeNodeOpen)

/** The flat list's JSON from the forest's walk with paths (usecases/FunctionQueries.ts, `walkLocated`), a batch at a time. */
export const flatJsonOfWalk = <E, R>(located: Stream.Stream<ReadonlyArray<PlacedFunction & LocatedFunction>, E, R>): Stream.Stream<Uint8Array, E, R> =>
  jsonArrayOfBatches(located, (batch) => JSON.stringify(batch.map(businessFunction)).slice(1, -1), ",", () => "")

/**
 * Posi in two halves, each made again only after a write of its own scope: the template, posi's
 * JSON made from the tree alone, with a hole where each linked application's object goes; and
 * each application's object (`linkedApplicationsJson`). `posiPieces` fills the holes: after a write
 * of one application, posi costs reading the applications and copying bytes, not reading and
 * encoding the forest again (docs/architecture.md, "The read path"). A hole is a 0x00 byte, the
 * code as a JSON string, a 0x00 byte: JSON.stringify escapes every control character, so no byte
 * of the answer itself is 0x00.
 *
 * The template is kept deflated, in blocks of about `blockBytes` of its text, each deflated on its
 * own and cut outside any hole: a filling inflates one block at a time as it copies, so the text
 * (9 MB at 25,000 functions) is never whole in memory, neither kept nor while it is made (about
 * a block of it at a time). What this returns is that form (`packTemplate`), read only by the
 * functions below.
 */
export const posiTemplate = <E, R>(walk: Stream.Stream<ReadonlyArray<PlacedFunction>, E, R>, blockBytes = TemplateBlockBytes): Effect.Effect<Uint8Array, E, R> =>
  Effect.suspend(() => {
    const blocks: Array<{ readonly length: number; readonly deflated: Buffer }> = []
    const holes = holesFound()
    /** Where the next block starts in the whole text. */
    let textBytes = 0
    /** The text not in a block yet, joined only when a block is cut from it. */
    let pending: Array<Uint8Array> = []
    let pendingBytes = 0
    const add = (text: Uint8Array, last: boolean) => {
      pending.push(text)
      pendingBytes += text.byteLength
      if (pendingBytes < blockBytes && !last) return
      let rest = pending.length === 1 ? Buffer.from(pending[0]!.buffer, pending[0]!.byteOffset, pending[0]!.byteLength) : Buffer.concat(pending, pendingBytes)
      while (rest.byteLength >= blockBytes || (last && rest.byteLength > 0)) {
        const end = holes.cut(rest, Math.min(blockBytes, rest.byteLength), textBytes)
        textBytes += end
        blocks.push({ length: end, deflated: deflateRawSync(rest.subarray(0, end), { level: TemplateDeflateLevel }) })
        rest = rest.subarray(end)
      }
      // A copy: a view would keep what was joined.
      pending = rest.byteLength === 0 ? [] : [Buffer.from(rest)]
      pendingBytes = rest.byteLength
    }
    // The text comes a batch of the walk at a time (nestedJson) and is cut into blocks as it
    // comes: neither the forest nor its whole text is ever in memory.
    return Stream.runForEach(nestedJson(walk, posiNodeOpen), (text) => Effect.sync(() => add(text, false))).pipe(
      Effect.map(() => {
        add(Empty, true)
        return packTemplate(blocks, holes)
      })
    )
  })

const hole = (code: string) => `\u0000${JSON.stringify(code)}\u0000`

/** `{...head, applications, children}` as JSON.stringify writes it, a hole for each application. */
const posiNodeOpen = (fn: PlacedFunction) =>
  `${JSON.stringify(nodeHead(fn)).slice(0, -1)},"applications":[${fn.applicationCodes.map(hole).join(",")}],"children":[`

const Empty = new Uint8Array(0)

/** Text per deflated block of posi's template: a piece's worth, inflated in well under a millisecond. */
const TemplateBlockBytes = 256 * 1024

/**
 * zlib's fastest level: the template is inflated at every filling and deflated at every write of
 * functions, and a better level saved little (measured in docs/architecture.md, "The read path").
 */
const TemplateDeflateLevel = 1

/**
 * The holes of a template's text as it is cut into blocks: where each opens, where the text
 * resumes after it, and whose it is (an index into `codes`, each code once).
 */
const holesFound = () => {
  const open: Array<number> = []
  const resume: Array<number> = []
  const which: Array<number> = []
  const codes: Array<string> = []
  const indexOf = new Map<string, number>()
  return {
    open,
    resume,
    which,
    codes,
    /**
     * Where to end a block of `text` (which starts at `start` in the whole text, outside a hole)
     * at `end` or just after: after the hole `end` would cut. Its holes are found on the way.
     */
    cut: (text: Buffer, end: number, start: number) => {
      for (let at = text.indexOf(0), close = 0; at !== -1 && at < end; at = text.indexOf(0, close + 1)) {
        close = text.indexOf(0, at + 1)
        if (close >= end) end = close + 1
        const code = JSON.parse(text.toString("utf8", at + 1, close)) as string
        let index = indexOf.get(code)
        if (index === undefined) {
          index = codes.push(code) - 1
          indexOf.set(code, index)
        }
        open.push(start + at)
        resume.push(start + close + 1)
        which.push(index)
      }
      return end
    }
  }
}

/**
 * Posi's template as kept, in one buffer of its own, so that the read cache counts all of it
 * (the holes' index included: for a demo-size tenant it weighs about half the deflated text) and
 * lets go of all of it at once. 32-bit words: the text's length, the count of blocks, the count of
 * holes, the bytes of the codes; each block's text length and deflated length; each hole's
 * opening, then each one's resumption, then each one's code (in this machine's byte order, read
 * in place); then the codes as a JSON array; then the deflated blocks one after the other.
 */
const packTemplate = (
  blocks: ReadonlyArray<{ readonly length: number; readonly deflated: Buffer }>,
  holes: ReturnType<typeof holesFound>
): Uint8Array => {
  const codes = Buffer.from(JSON.stringify(holes.codes))
  const { codesAt, holesAt, size } = templateLayout(blocks.length, holes.open.length, codes.byteLength)
  const packed = Buffer.allocUnsafeSlow(size + blocks.reduce((total, block) => total + block.deflated.byteLength, 0))
  packed.writeUInt32LE(blocks.reduce((total, block) => total + block.length, 0), 0)
  packed.writeUInt32LE(blocks.length, 4)
  packed.writeUInt32LE(holes.open.length, 8)
  packed.writeUInt32LE(codes.byteLength, 12)
  const index = new Int32Array(packed.buffer, packed.byteOffset + holesAt, 3 * holes.open.length)
  index.set(holes.open, 0)
  index.set(holes.resume, holes.open.length)
  index.set(holes.which, 2 * holes.open.length)
  codes.copy(packed, codesAt)
  let at = size
  blocks.forEach((block, i) => {
    packed.writeUInt32LE(block.length, 16 + 8 * i)
    packed.writeUInt32LE(block.deflated.byteLength, 20 + 8 * i)
    at += block.deflated.copy(packed, at)
    releaseNow(block.deflated)
  })
  return packed
}

/** Where the holes and the codes lie in a packed template, and where its blocks start. */
const templateLayout = (blockCount: number, holeCount: number, codesBytes: number) => {
  const holesAt = 16 + 8 * blockCount
  const codesAt = holesAt + 12 * holeCount
  return { holesAt, codesAt, size: codesAt + codesBytes }
}

/** A block of the template: where its text starts and ends in the whole text, and its deflated bytes. */
interface TemplateBlock {
  readonly start: number
  readonly end: number
  readonly deflated: Uint8Array
}

/**
 * A packed template read: its text's length, its blocks, and its holes, whose arrays are views of
 * the packed bytes (an allocUnsafeSlow buffer starts at 0, and every offset is a multiple of 4).
 */
const unpackTemplate = (template: Uint8Array): PosiHoles => {
  const packed = Buffer.from(template.buffer, template.byteOffset, template.byteLength)
  const blockCount = packed.readUInt32LE(4)
  const holeCount = packed.readUInt32LE(8)
  const { codesAt, holesAt, size } = templateLayout(blockCount, holeCount, packed.readUInt32LE(12))
  const blocks: Array<TemplateBlock> = []
  let start = 0
  let at = size
  for (let i = 0; i < blockCount; i++) {
    const length = packed.readUInt32LE(16 + 8 * i)
    const deflated = packed.readUInt32LE(20 + 8 * i)
    blocks.push({ start, end: start + length, deflated: packed.subarray(at, at + deflated) })
    start += length
    at += deflated
  }
  const holes = (nth: number) => new Int32Array(template.buffer, template.byteOffset + holesAt + 4 * holeCount * nth, holeCount)
  const codes = JSON.parse(packed.toString("utf8", codesAt, size)) as Array<string>
  return {
    length: packed.readUInt32LE(0),
    blocks,
    open: holes(0),
    resume: holes(1),
    which: holes(2),
    codes,
    indexOf: new Map(codes.map((code, i) => [code, i]))
  }
}

/** The length of the template's text: what posi weighs without its applications' objects. */
export const posiTemplateBytes = (template: Uint8Array) => Buffer.from(template.buffer, template.byteOffset, template.byteLength).readUInt32LE(0)

/**
 * A block's text, inflated into one buffer (zlib otherwise fills 16 KiB chunks and joins them,
 * the block twice over in garbage), a byte longer than the text: zlib takes an output that fills
 * its buffer exactly for one that may go on, and allocates another.
 */
const inflated = (block: TemplateBlock) => inflateRawSync(block.deflated, { chunkSize: chunkSizeOf(block) })
const chunkSizeOf = (block: TemplateBlock) => Math.max(64, block.end - block.start + 1)

/**
 * Releases a block's text once read: the buffer zlib made for it, when it is one of its own
 * (`chunkSizeOf`'s size; a small block's is a slice of Node's shared pool, whose buffer is larger).
 */
const releaseBlock = (text: Buffer, block: TemplateBlock) => {
  if (text.buffer.byteLength === chunkSizeOf(block)) releaseNow(new Uint8Array(text.buffer))
}

/**
 * Copies the template's text from `from` to `to` into `target` at `at`, inflating the blocks it
 * reads, and answers the count copied. The text is read forward, as a filling reads it: each block
 * is inflated once, when the copying reaches it, and released when it moves past.
 */
const templateReader = (blocks: ReadonlyArray<TemplateBlock>) => {
  let index = 0
  let text: Buffer | undefined
  return (target: Buffer, at: number, from: number, to: number) => {
    let copied = 0
    while (from < to) {
      while (blocks[index]!.end <= from) {
        if (text !== undefined) releaseBlock(text, blocks[index]!)
        text = undefined
        index++
      }
      const block = blocks[index]!
      text ??= inflated(block)
      const count = text.copy(target, at + copied, from - block.start, Math.min(to, block.end) - block.start)
      // Only a text read backwards (or released before it was read) copies nothing.
      if (count === 0) throw new Error(`posi's template read out of order at ${from}`)
      copied += count
      from += count
    }
    return copied
  }
}

/** An application's object in posi, by its code. */
export interface LinkedJson {
  readonly code: string
  readonly json: Uint8Array
}

/** Each application's object in posi, all in one buffer of their own (as `applicationJsons`). */
export const linkedApplicationJsons = (applications: ReadonlyArray<LinkedApplication>): ReadonlyArray<LinkedJson> =>
  inOneBuffer(applications.map((application) => JSON.stringify(linkedApplication(application))))
    .map((json, i) => ({ code: applications[i]!.code, json }))

/** About what a piece of a filled template holds: the answer goes out while the rest is filled. */
export const PosiPieceBytes = 256 * 1024

/**
 * A template read once, for all the fillings it serves (one after each write of an application):
 * where each hole opens, where the text resumes after it, and whose it is. Filling is then
 * copying the template's stretches and the applications' objects, a piece at a time into a
 * buffer of the piece's size, with no search for holes, no text decoded and one lookup per
 * application instead of one per link (measured at 37,000 links: searching and joining parts took
 * 40 ms per filling). 12 bytes per link, found as the template is made and packed with it, so
 * that the read cache counts them; each code once, made into an array and a map once per template.
 */
interface PosiHoles {
  /** The length of the template's text, and its blocks. */
  readonly length: number
  readonly blocks: ReadonlyArray<TemplateBlock>
  /** For each hole in order, the offset of its first byte (0x00) in the template. */
  readonly open: Int32Array
  /** For each hole in order, the offset just after its last byte. */
  readonly resume: Int32Array
  /** For each hole in order, its application's index in `codes`. */
  readonly which: Int32Array
  /** Each linked application's code once, in the order of their first hole. */
  readonly codes: ReadonlyArray<string>
  readonly indexOf: ReadonlyMap<string, number>
}

/** By template: a template is kept (and filled again) until a write of functions replaces it. */
const holesOfTemplate = new WeakMap<Uint8Array, PosiHoles>()

const posiHoles = (template: Uint8Array): PosiHoles => {
  const known = holesOfTemplate.get(template)
  if (known !== undefined) return known
  const holes = unpackTemplate(template)
  holesOfTemplate.set(template, holes)
  return holes
}

/**
 * The applications the holes of the template's first `bytes` name (each once): all that a first
 * piece of posi of at most that size shows, since filling a hole only lengthens what precedes the
 * next. None when the whole template is that short: its one piece shows them all.
 */
export const holeCodes = (template: Uint8Array, bytes: number): ReadonlyArray<string> => {
  // A template within `bytes` is a first piece of every application: none need be read apart.
  if (posiTemplateBytes(template) <= bytes) return []
  const { codes, open, which } = posiHoles(template)
  const first = new Set<string>()
  for (let hole = 0; hole < open.length && open[hole]! < bytes; hole++) first.add(codes[which[hole]!]!)
  return [...first]
}

/**
 * The template's holes filled as the applications come in batches, a piece of about `pieceBytes`
 * at a time: together, the bytes of JSON.stringify of posi's encoded form. A piece goes as soon as
 * every hole in it is filled, so the first waits only for the batch of the applications it shows.
 */
export const posiPieces = <E, R>(
  template: Uint8Array,
  batches: Stream.Stream<ReadonlyArray<LinkedJson>, E, R>,
  pieceBytes = PosiPieceBytes
): Stream.Stream<Uint8Array, E, R> =>
  Stream.suspend(() => {
    const { blocks, codes, indexOf, length, open, resume, which } = posiHoles(template)
    const copy = templateReader(blocks)
    /** Each application's JSON by its index in `codes`, once read. */
    const jsons: Array<Uint8Array | undefined> = new Array(codes.length)
    /** The next hole to fill, and the offset in the template of what is not in a piece yet. */
    let hole = 0
    let from = 0
    /** The hole whose application a piece waited for, when one did. */
    let missing = -1
    /**
     * The next piece, if every hole it takes is filled: `pieceBytes`, cut where they end (in the
     * template's text, or after the object of the hole that reaches them), or the rest when shorter.
     */
    const next = (): Buffer | undefined => {
      let size = 0
      /** The piece takes the holes before `end` and the template up to `stop`. */
      let end = hole
      let stop = from
      while (size < pieceBytes) {
        const upTo = end < open.length ? open[end]! : length
        if (size + upTo - stop >= pieceBytes) {
          stop += pieceBytes - size
          size = pieceBytes
          break
        }
        size += upTo - stop
        stop = upTo
        if (end === open.length) break
        const json = jsons[which[end]!]
        if (json === undefined) {
          missing = end
          return undefined
        }
        size += json.byteLength
        stop = resume[end]!
        end++
      }
      const piece = Buffer.allocUnsafe(size)
      let written = 0
      for (; hole < end; hole++) {
        written += copy(piece, written, from, open[hole]!)
        const json = jsons[which[hole]!]!
        piece.set(json, written)
        written += json.byteLength
        from = resume[hole]!
      }
      copy(piece, written, from, stop)
      from = stop
      return piece
    }
    function* filled(): Generator<Uint8Array> {
      while (from < length) {
        const piece = next()
        if (piece === undefined) return
        yield piece
      }
    }
    function* rest(): Generator<Uint8Array> {
      while (from < length) {
        const piece = next()
        // A link names an application that exists, and no write deletes one.
        if (piece === undefined) throw new Error(`posi links ${codes[which[missing]!]}, which is not among the applications read`)
        yield piece
      }
    }
    return batches.pipe(
      Stream.flatMap((batch) => {
        for (const linked of batch) {
          const index = indexOf.get(linked.code)
          if (index !== undefined) jsons[index] = linked.json
        }
        return Stream.fromIterable({ [Symbol.iterator]: filled }, { chunkSize: 1 })
      }),
      Stream.concat(Stream.fromIterable({ [Symbol.iterator]: rest }, { chunkSize: 1 }))
    )
  })

/** Each function's JSON as the flat list's and the search's elements, all in one buffer of their own. */
export const functionJsons = (functions: ReadonlyArray<BusinessFunction>): ReadonlyArray<Uint8Array> =>
  inOneBuffer(functions.map((fn) => JSON.stringify(businessFunction(fn))))

/**
 * Functions sorted by code, packed for the pages cut from them (a search's): each one's JSON as
 * the whole list writes it, and their codes, in one buffer of its own that the read cache counts
 * whole. 32-bit words: the count, then each code's offset from the codes' start and the end of
 * the last, then each element's offset from the elements' start and the end of the last; then the
 * codes in UTF-8, one after another; then the elements.
 */
export const packedByCode = (functions: ReadonlyArray<BusinessFunction>): Uint8Array => {
  const elements = functions.map((fn) => JSON.stringify(businessFunction(fn)))
  const count = functions.length
  const { codeOffset, codesAt, elementOffset } = packedLayout(count)
  const elementsAt = codesAt + functions.reduce((total, fn) => total + Buffer.byteLength(fn.code), 0)
  const packed = Buffer.allocUnsafeSlow(elementsAt + elements.reduce((total, json) => total + Buffer.byteLength(json), 0))
  packed.writeUInt32LE(count, 0)
  let code = 0
  let element = 0
  functions.forEach((fn, i) => {
    packed.writeUInt32LE(code, codeOffset(i))
    code += packed.write(fn.code, codesAt + code)
    packed.writeUInt32LE(element, elementOffset(i))
    element += packed.write(elements[i]!, elementsAt + element)
  })
  packed.writeUInt32LE(code, codeOffset(count))
  packed.writeUInt32LE(element, elementOffset(count))
  return packed
}

/** Where `packedByCode` puts the offset of the `i`-th code and element (the `count`-th: the end of the last), and the codes. */
const packedLayout = (count: number) => ({
  codeOffset: (i: number) => 4 + 4 * i,
  elementOffset: (i: number) => 4 + 4 * (count + 1) + 4 * i,
  codesAt: 4 + 8 * (count + 1)
})

/** A packed list read: its count, the code of its `i`-th function and that one's JSON (a view of the packed bytes). */
export interface ByCode {
  readonly count: number
  readonly codeAt: (i: number) => string
  readonly item: (i: number) => Uint8Array
}

/**
 * A view of a packed list, made per read: nothing is decoded until asked (a page decodes the
 * codes of its binary search, about 15 at 25,000 functions), so the read cache's count of the
 * packed bytes is all that the list holds.
 */
export const unpackedByCode = (packed: Uint8Array): ByCode => {
  const bytes = Buffer.from(packed.buffer, packed.byteOffset, packed.byteLength)
  const count = bytes.readUInt32LE(0)
  const { codeOffset, codesAt, elementOffset } = packedLayout(count)
  const elementsAt = codesAt + bytes.readUInt32LE(codeOffset(count))
  return {
    count,
    codeAt: (i) => bytes.toString("utf8", codesAt + bytes.readUInt32LE(codeOffset(i)), codesAt + bytes.readUInt32LE(codeOffset(i + 1))),
    item: (i) => bytes.subarray(elementsAt + bytes.readUInt32LE(elementOffset(i)), elementsAt + bytes.readUInt32LE(elementOffset(i + 1)))
  }
}

/**
 * Each application's JSON, as an element of the list's array, all in one buffer of their own: a
 * small Buffer.from comes from Node's shared 8 KiB pool, and one kept long would keep its whole
 * block.
 */
export const applicationJsons = (applications: ReadonlyArray<Application>): ReadonlyArray<Uint8Array> =>
  inOneBuffer(applications.map((app) => JSON.stringify(application(app))))

const change = (entry: ChangeLogEntry) => ({
  id: entry.id,
  applicationCode: entry.applicationCode,
  field: entry.field,
  oldValue: entry.oldValue,
  newValue: entry.newValue,
  changedBy: entry.changedBy,
  changedAt: iso(entry.changedAt)
})

/**
 * A page of a change log, whole: its one read of the 1,000,000-entry log in the enterprise-size
 * benchmark spent more in the schema's encoding of 50 entries and their times than in
 * PostgreSQL, and its tail follows what each read allocates (docs/architecture.md, "Performance").
 */
export const changesJson = (entries: ReadonlyArray<ChangeLogEntry>): string => JSON.stringify(entries.map(change))

/** Each entry's JSON, as an element of a page of the change log. */
export const changeJsons = (entries: ReadonlyArray<ChangeLogEntry>): ReadonlyArray<Uint8Array> =>
  inOneBuffer(entries.map((entry) => JSON.stringify(change(entry))))

/** `texts` in UTF-8, each a view of one buffer of their own. */
const inOneBuffer = (texts: ReadonlyArray<string>): ReadonlyArray<Uint8Array> => {
  const all = Buffer.allocUnsafeSlow(texts.reduce((total, text) => total + Buffer.byteLength(text), 0))
  let at = 0
  return texts.map((text) => {
    const length = all.write(text, at)
    at += length
    return all.subarray(at - length, at)
  })
}

/** About what a piece of a list's JSON holds as it goes to the compressor. */
export const ListPieceBytes = 256 * 1024

/**
 * The JSON array of `elements` (each already JSON), in pieces of about `pieceBytes`: together,
 * "[", the elements separated by ",", "]", the bytes of JSON.stringify of the whole array.
 */
export function* arrayPieces(elements: ReadonlyArray<Uint8Array>, pieceBytes: number): Generator<Uint8Array> {
  if (elements.length === 0) {
    yield EmptyArray
    return
  }
  let parts: Array<Uint8Array> = []
  let size = 0
  for (let i = 0; i < elements.length; i++) {
    parts.push(i === 0 ? Open : Comma, elements[i]!)
    size += 1 + elements[i]!.byteLength
    if (size >= pieceBytes) {
      yield Buffer.concat(parts, size)
      parts = []
      size = 0
    }
  }
  parts.push(Close)
  yield Buffer.concat(parts, size + 1)
}
