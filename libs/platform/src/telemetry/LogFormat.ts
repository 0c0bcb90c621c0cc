import { Context, Fiber, Formatter, Logger, Option, References, Tracer } from "effect"

/**
 * Effect 3's hash of a string (djb2, then its `optimize`), which set the order of a log line's
 * annotations: they were kept in a hash map and written in its order.
 */
const effect3Hash = (key: string): number => {
  let h = 5381
  let i = key.length
  while (i) h = (h * 33) ^ key.charCodeAt(--i)
  return (h & 0xbfffffff) | ((h >>> 1) & 0x40000000)
}

/**
 * Effect 3's hash map walked its trie by 5-bit fragments of the hash, lowest first: two keys
 * compare by their first differing fragment.
 */
const effect3Order = (a: string, b: string): number => {
  const ha = effect3Hash(a)
  const hb = effect3Hash(b)
  for (let shift = 0; shift < 32; shift += 5) {
    const d = ((ha >>> shift) & 0x1f) - ((hb >>> shift) & 0x1f)
    if (d !== 0) return d
  }
  return 0
}

/** `annotations` in the order Effect 3 wrote them, so that a line reads byte for byte as it did. */
const inEffect3Order = (annotations: Readonly<Record<string, unknown>>): Record<string, unknown> => {
  const ordered: Record<string, unknown> = {}
  for (const key of Object.keys(annotations).sort(effect3Order)) ordered[key] = annotations[key]
  return ordered
}

/**
 * The fiber a logger is handed, seen with other annotations: Effect 4's formatters read them
 * from the fiber (`References.CurrentLogAnnotations`), not from the log call's options.
 */
const withAnnotations = (fiber: Fiber.Fiber<unknown, unknown>, annotations: Record<string, unknown>): Fiber.Fiber<unknown, unknown> => {
  const view: Fiber.Fiber<unknown, unknown> = Object.create(fiber)
  return Object.assign(view, {
    getRef: <A>(ref: Context.Reference<A>): A =>
      (ref as Context.Reference<unknown>) === References.CurrentLogAnnotations ? (annotations as A) : fiber.getRef(ref)
  })
}

/** A logger that writes Effect 3's annotation order, Effect 4's formatter otherwise. */
const inEffect3AnnotationOrder = <Output>(logger: Logger.Logger<unknown, Output>): Logger.Logger<unknown, Output> =>
  Logger.make((options) =>
    logger.log({ ...options, fiber: withAnnotations(options.fiber, inEffect3Order(options.fiber.getRef(References.CurrentLogAnnotations))) })
  )

/**
 * Adds `traceId` and `spanId` to the annotations of every line written inside a span, so that a
 * log line leads to its trace and back, exporter or not.
 */
export const withTraceIds = <Message, Output>(logger: Logger.Logger<Message, Output>): Logger.Logger<Message, Output> =>
  Logger.make((options) => {
    const span = Context.getOption(options.fiber.context, Tracer.ParentSpan)
    if (Option.isNone(span)) return logger.log(options)
    const annotations = { ...options.fiber.getRef(References.CurrentLogAnnotations), traceId: span.value.traceId, spanId: span.value.spanId }
    return logger.log({ ...options, fiber: withAnnotations(options.fiber, annotations) })
  })

/**
 * One JSON object a line, as Effect 3's `jsonLogger` wrote it: `message`, `logLevel` (the level's
 * label, `INFO`), `timestamp`, `cause` when there is one, `annotations`, `spans`, `fiberId`.
 * Effect 4 names the level `level`; dashboards, alerts and the black-box suite read `logLevel`.
 */
export const jsonLogger: Logger.Logger<unknown, string> = inEffect3AnnotationOrder(
  Logger.map(Logger.formatStructured, ({ annotations, cause, fiberId, level, message, spans, timestamp }) =>
    Formatter.formatJson({ message, logLevel: level, timestamp, cause, annotations, spans, fiberId }))
)

/** `key=value` lines, as Effect 3's `logfmtLogger` wrote them. */
export const logfmtLogger: Logger.Logger<unknown, string> = inEffect3AnnotationOrder(Logger.formatLogFmt)

/** Effect's pretty lines for humans (`LOG_FORMAT=pretty`), annotations in Effect 3's order. */
export const prettyLogger: Logger.Logger<unknown, void> = inEffect3AnnotationOrder(Logger.consolePretty())
