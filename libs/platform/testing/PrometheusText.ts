/**
 * A strict reader of the Prometheus text exposition format 0.0.4, as Prometheus documents it
 * ("Exposition formats"): the grammar of every line, and the rules across lines that a scraper
 * relies on. No npm parser is kept up to date and strict (the one widely used is loose on
 * grammar and drops labelled histograms), so this one throws on anything Prometheus would not
 * read, or would read differently, naming the line.
 */

export type MetricType = "counter" | "gauge" | "histogram" | "summary" | "untyped"

export interface Sample {
  /** The sample's own name: a histogram's are `<family>_bucket`, `_sum` and `_count`. */
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

export interface MetricFamily {
  readonly name: string
  readonly type: MetricType
  readonly help: string | undefined
  readonly samples: ReadonlyArray<Sample>
}

const metricName = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const labelName = /^[a-zA-Z_][a-zA-Z0-9_]*$/
const types = new Set<MetricType>(["counter", "gauge", "histogram", "summary", "untyped"])
// Go's strconv.ParseFloat as the format uses it: decimal or exponent notation, and the three specials.
const floatText = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/

class ExpositionError extends Error {
  constructor(lineNumber: number, line: string, reason: string) {
    super(`line ${lineNumber}: ${reason}: ${JSON.stringify(line)}`)
  }
}

const parseValue = (text: string): number | undefined => {
  if (text === "NaN") return NaN
  if (text === "+Inf") return Infinity
  if (text === "-Inf") return -Infinity
  return floatText.test(text) ? Number(text) : undefined
}

/** `\\` and `\n` in HELP; the same and `\"` in label values. Any other escape is malformed. */
const unescape = (text: string, quoteAllowed: boolean): string | undefined => {
  let out = ""
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (c !== "\\") {
      out += c
      continue
    }
    const next = text[++i]
    if (next === "\\") out += "\\"
    else if (next === "n") out += "\n"
    else if (next === "\"" && quoteAllowed) out += "\""
    else return undefined
  }
  return out
}

/** The labels between `{` and `}` starting at `start`; returns them and the index after `}`. */
const readLabels = (line: string, start: number, fail: (reason: string) => never): [Record<string, string>, number] => {
  const labels: Record<string, string> = {}
  let i = start
  const skipBlanks = () => {
    while (line[i] === " " || line[i] === "\t") i++
  }
  skipBlanks()
  while (line[i] !== "}") {
    const nameStart = i
    while (i < line.length && /[a-zA-Z0-9_]/.test(line[i]!)) i++
    const name = line.slice(nameStart, i)
    if (!labelName.test(name)) fail("a label name is malformed")
    if (name.startsWith("__")) fail("a label name starts with __, which is reserved")
    if (name in labels) fail(`label ${name} appears twice`)
    skipBlanks()
    if (line[i] !== "=") fail(`label ${name} has no =`)
    i++
    skipBlanks()
    if (line[i] !== "\"") fail(`label ${name}'s value is not quoted`)
    i++
    let raw = ""
    while (i < line.length && line[i] !== "\"") {
      if (line[i] === "\\") raw += line[i++]
      if (i < line.length) raw += line[i++]
    }
    if (line[i] !== "\"") fail(`label ${name}'s value is not closed`)
    i++
    const value = unescape(raw, true)
    if (value === undefined) fail(`label ${name}'s value has an unknown escape`)
    labels[name] = value
    skipBlanks()
    if (line[i] === ",") {
      i++
      skipBlanks()
    } else if (line[i] !== "}") fail("labels are not separated by commas")
  }
  return [labels, i + 1]
}

/** The family a sample name belongs to, given the families typed so far. */
const familyOf = (sampleName: string, typed: ReadonlyMap<string, MetricType>): string => {
  for (const suffix of ["_bucket", "_sum", "_count"]) {
    if (!sampleName.endsWith(suffix)) continue
    const base = sampleName.slice(0, -suffix.length)
    const type = typed.get(base)
    if (type === "histogram" || (type === "summary" && suffix !== "_bucket")) return base
  }
  return sampleName
}

const labelKey = (labels: Readonly<Record<string, string>>, without?: string) =>
  JSON.stringify(Object.keys(labels).filter((name) => name !== without).sort().map((name) => [name, labels[name]]))

/** Every histogram series: buckets rising with `le`, cumulative counts, `+Inf` equal to `_count`, and a `_sum`. */
const checkHistogram = (family: MetricFamily) => {
  const series = new Map<string, { buckets: Array<[number, number]>; count?: number; sum?: number }>()
  const of = (key: string) => series.get(key) ?? series.set(key, { buckets: [] }).get(key)!
  for (const sample of family.samples) {
    if (sample.name === `${family.name}_bucket`) {
      const le = sample.labels["le"]
      const bound = le === undefined ? undefined : parseValue(le)
      if (bound === undefined || Number.isNaN(bound)) throw new Error(`${family.name}: a bucket without a numeric le`)
      of(labelKey(sample.labels, "le")).buckets.push([bound, sample.value])
    } else if (sample.name === `${family.name}_count`) of(labelKey(sample.labels)).count = sample.value
    else if (sample.name === `${family.name}_sum`) of(labelKey(sample.labels)).sum = sample.value
    else throw new Error(`${family.name}: sample ${sample.name} is not a histogram's`)
  }
  for (const [key, { buckets, count, sum }] of series) {
    const where = `${family.name}${key}`
    if (buckets.length === 0 || count === undefined || sum === undefined) throw new Error(`${where}: a series needs buckets, _count and _sum`)
    const sorted = [...buckets].sort((a, b) => a[0] - b[0])
    if (sorted.some(([bound], i) => i > 0 && bound === sorted[i - 1]![0])) throw new Error(`${where}: two buckets share an le`)
    if (sorted.some(([, n], i) => i > 0 && n < sorted[i - 1]![1])) throw new Error(`${where}: bucket counts are not cumulative`)
    const last = sorted[sorted.length - 1]!
    if (last[0] !== Infinity) throw new Error(`${where}: no le="+Inf" bucket`)
    if (last[1] !== count) throw new Error(`${where}: le="+Inf" counts ${last[1]}, _count says ${count}`)
  }
}

/**
 * Reads a whole exposition: one family per metric, in the order met. Throws on a malformed line,
 * a HELP or TYPE repeated or after the family's samples, a family split in two groups, a sample
 * repeated, a negative counter, an inconsistent histogram, or a text not ending with a newline.
 */
export const parsePrometheusText = (text: string): Map<string, MetricFamily> => {
  if (text.length > 0 && !text.endsWith("\n")) throw new Error("the exposition does not end with a newline")
  const families = new Map<string, { name: string; type: MetricType; help: string | undefined; samples: Array<Sample> }>()
  const typed = new Map<string, MetricType>()
  const closed = new Set<string>()
  const seen = new Set<string>()
  let current: string | undefined
  const enter = (name: string, fail: (reason: string) => never) => {
    if (current === name) return families.get(name)!
    if (closed.has(name)) fail(`family ${name} continues after another family: its lines must be one group`)
    if (current !== undefined) closed.add(current)
    current = name
    const family = families.get(name) ?? { name, type: typed.get(name) ?? "untyped", help: undefined, samples: [] }
    families.set(name, family)
    return family
  }
  const lines = text.split("\n").slice(0, -1)
  lines.forEach((line, index) => {
    const fail = (reason: string): never => {
      throw new ExpositionError(index + 1, line, reason)
    }
    if (line.trim() === "") return
    if (line.startsWith("#")) {
      const [, keyword, name, ...rest] = line.split(/[ \t]+/)
      if (keyword !== "HELP" && keyword !== "TYPE") return
      if (name === undefined || !metricName.test(name)) fail(`${keyword} names no valid metric`)
      const family = enter(name!, fail)
      if (family.samples.length > 0) fail(`${keyword} comes after samples of ${name}`)
      if (keyword === "TYPE") {
        if (typed.has(name!)) fail(`a second TYPE for ${name}`)
        if (rest.length !== 1 || !types.has(rest[0] as MetricType)) fail("TYPE names no valid type")
        typed.set(name!, rest[0] as MetricType)
        family.type = rest[0] as MetricType
      } else {
        if (family.help !== undefined) fail(`a second HELP for ${name}`)
        const docstring = unescape(line.replace(/^#[ \t]+HELP[ \t]+\S+[ \t]?/, ""), false)
        if (docstring === undefined) fail("HELP has an unknown escape")
        family.help = docstring
      }
      return
    }
    const nameEnd = line.search(/[{ \t]/)
    const name = nameEnd === -1 ? line : line.slice(0, nameEnd)
    if (!metricName.test(name)) fail("a sample's metric name is malformed")
    let [labels, rest]: [Record<string, string>, number] = [{}, name.length]
    if (line[rest] === "{") [labels, rest] = readLabels(line, rest + 1, fail)
    const fields = line.slice(rest).trim().split(/[ \t]+/)
    if (line.slice(rest).length > 0 && !/^[ \t]/.test(line.slice(rest))) fail("no blank between the sample's name or labels and its value")
    if (fields.length < 1 || fields.length > 2 || fields[0] === "") fail("a sample needs a value and at most a timestamp")
    const value = parseValue(fields[0]!)
    if (value === undefined) fail("the value is not a float")
    if (fields[1] !== undefined && !/^-?\d+$/.test(fields[1])) fail("the timestamp is not an integer")
    const familyName = familyOf(name, typed)
    const family = enter(familyName, fail)
    if (family.type === "counter" && !(value! >= 0)) fail("a counter is negative or NaN")
    const key = `${name}${labelKey(labels)}`
    if (seen.has(key)) fail("the same series appears twice")
    seen.add(key)
    family.samples.push({ name, labels, value: value! })
  })
  for (const family of families.values()) if (family.type === "histogram") checkHistogram(family)
  return families
}

/** Whether every label of `want` is on `sample` with that value (others may be there too). */
export const hasLabels = (sample: Sample, want: Readonly<Record<string, string>>) =>
  Object.entries(want).every(([name, value]) => sample.labels[name] === value)

/** The samples named `name` (a family's, or a histogram's `_count`...) carrying the labels of `want`. */
export const samplesOf = (families: ReadonlyMap<string, MetricFamily>, name: string, want: Readonly<Record<string, string>> = {}) =>
  [...families.values()].flatMap((family) => family.samples.filter((sample) => sample.name === name && hasLabels(sample, want)))

/** The sum of the samples `samplesOf` finds: 0 when there is none. */
export const sumOf = (families: ReadonlyMap<string, MetricFamily>, name: string, want: Readonly<Record<string, string>> = {}) =>
  samplesOf(families, name, want).reduce((total, sample) => total + sample.value, 0)
