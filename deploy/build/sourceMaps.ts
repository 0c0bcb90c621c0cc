/**
 * Source maps of the bundles reduced to the project's own sources. `node --enable-source-maps`
 * decodes a bundle's whole map the first time a stack is formatted (Effect formats some at start),
 * and the packages' mappings are ~95% of it: measured on the referential, ~65 MB of resident
 * memory and ~400 ms of start for frames nobody reads as TypeScript. Their code stays unmapped: a
 * frame there names the bundle's line, a frame in the project's code its TypeScript line.
 */

export interface SourceMapV3 {
  readonly version: 3
  readonly sources: ReadonlyArray<string>
  readonly names: ReadonlyArray<string>
  readonly mappings: string
  readonly sourceRoot?: string
  readonly sourcesContent?: ReadonlyArray<string | null>
}

const Base64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
const Digit = new Map([...Base64].map((char, index) => [char, index]))

/** The signed integers of one segment (base64 VLQ, 5 bits per digit, the sign in the lowest bit). */
const decodeSegment = (text: string): Array<number> => {
  const values: Array<number> = []
  let value = 0
  let shift = 0
  for (const char of text) {
    const digit = Digit.get(char)
    if (digit === undefined) throw new Error(`not a base64 VLQ digit: '${char}'`)
    value += (digit & 31) << shift
    if ((digit & 32) !== 0) {
      shift += 5
      continue
    }
    values.push((value & 1) === 1 ? -(value >>> 1) : value >>> 1)
    value = 0
    shift = 0
  }
  return values
}

const encodeValue = (signed: number): string => {
  let value = signed < 0 ? (-signed << 1) | 1 : signed << 1
  let text = ""
  do {
    let digit = value & 31
    value >>>= 5
    if (value > 0) digit |= 32
    text += Base64[digit]
  } while (value > 0)
  return text
}

/**
 * `map` with the mappings, sources and names of the sources `keep` refuses taken out. Where the
 * generated code passes from a kept source to a dropped one, a segment without a source marks the
 * place, so that a position there maps to nothing instead of to the kept code before it.
 */
export const keepSources = (map: SourceMapV3, keep: (source: string) => boolean): SourceMapV3 => {
  const sourceIndex = new Map<number, number>()
  const sources: Array<string> = []
  map.sources.forEach((source, index) => {
    if (!keep(source)) return
    sourceIndex.set(index, sources.length)
    sources.push(source)
  })
  const nameIndex = new Map<number, number>()
  const names: Array<string> = []

  // Decoding state (absolute values; the generated column restarts on every line).
  let source = 0
  let line = 0
  let column = 0
  let name = 0
  // Encoding state, relative to what was last written.
  let lastSource = 0
  let lastLine = 0
  let lastColumn = 0
  let lastName = 0
  let mapped = false // whether the last segment written carries a source

  const lines = map.mappings.split(";").map((generatedLine) => {
    let generatedColumn = 0
    let lastGeneratedColumn = 0
    const out: Array<string> = []
    for (const segment of generatedLine.split(",")) {
      if (segment === "") continue
      const fields = decodeSegment(segment)
      generatedColumn += fields[0]!
      if (fields.length === 1) continue
      source += fields[1]!
      line += fields[2]!
      column += fields[3]!
      if (fields.length >= 5) name += fields[4]!
      const kept = sourceIndex.get(source)
      if (kept === undefined) {
        if (mapped) {
          out.push(encodeValue(generatedColumn - lastGeneratedColumn))
          lastGeneratedColumn = generatedColumn
          mapped = false
        }
        continue
      }
      let text = encodeValue(generatedColumn - lastGeneratedColumn) + encodeValue(kept - lastSource) +
        encodeValue(line - lastLine) + encodeValue(column - lastColumn)
      if (fields.length >= 5) {
        let keptName = nameIndex.get(name)
        if (keptName === undefined) {
          keptName = names.length
          nameIndex.set(name, keptName)
          names.push(map.names[name]!)
        }
        text += encodeValue(keptName - lastName)
        lastName = keptName
      }
      out.push(text)
      lastGeneratedColumn = generatedColumn
      lastSource = kept
      lastLine = line
      lastColumn = column
      mapped = true
    }
    return out.join(",")
  })
  return { version: 3, sources, names, mappings: lines.join(";") }
}
