import { type Clock, Context, Option, type Tracer } from "effect"

const emptyContext = Context.empty()

/**
 * A span made by hand, outside a fiber (the hot paths of the events and the attempts): under
 * `parent`, sampled unless it is not, or a root span when there is none, whatever span
 * OpenTelemetry has in hand at that moment.
 */
export const startSpan = (
  tracer: Tracer.Tracer,
  clock: Clock.Clock,
  name: string,
  parent: Option.Option<Tracer.AnySpan>,
  kind: Tracer.SpanKind,
  links: Array<Tracer.SpanLink> = []
): Tracer.Span =>
  tracer.span({
    name,
    parent,
    annotations: emptyContext,
    links,
    startTime: clock.currentTimeNanosUnsafe(),
    kind,
    root: Option.isNone(parent),
    sampled: Option.isNone(parent) || parent.value.sampled
  })
