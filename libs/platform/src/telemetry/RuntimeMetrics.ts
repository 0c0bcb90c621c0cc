import { Effect } from "effect"
import { type Histogram, monitorEventLoopDelay } from "node:perf_hooks"
import { getHeapSpaceStatistics, getHeapStatistics } from "node:v8"
import { Metrics, observe } from "./Metrics.js"

/**
 * How often the event loop's delay is sampled, by a native timer that wakes an idle process at
 * each sample (its cost, and why not the usual 10 ms: docs/observability.md, "What recording costs").
 */
const DelayResolutionMs = 20

/**
 * How long a reading is reused: a scrape and an export within it share one, so that the delay's
 * window (reset at each reading) is not cut short by the second reader.
 */
const ReuseForMs = 5_000

/** The delay's gauges, each a statistic of the samples since the last reading. */
const DelayStatistics: ReadonlyArray<{ readonly name: string; readonly what: string; readonly of: (samples: Histogram) => number }> = [
  { name: "p50", what: "median", of: (samples) => samples.percentile(50) },
  { name: "p90", what: "90th percentile", of: (samples) => samples.percentile(90) },
  { name: "p99", what: "99th percentile", of: (samples) => samples.percentile(99) },
  { name: "max", what: "longest", of: (samples) => samples.max }
]

const secondsOfMs = (value: number) => value / 1_000
/**
 * A sample of the delay is the time between two firings of the timer, its interval included (an
 * idle loop's median is 20.2 ms at 20 ms): the delay is what lies beyond the interval.
 */
const delaySecondsOfNs = (value: number) => Math.max(0, value / 1e6 - DelayResolutionMs) / 1_000

/**
 * The process's own measures under OpenTelemetry's process, V8 and Node.js runtime conventions
 * (docs/observability.md): resident memory, CPU time, each V8 heap space's use and size and the
 * most the heap may take, the time the event loop spent busy and idle, and its delay over the time
 * since the last reading: what a memory target or a slow answer is read against. Read when a
 * scrape or an export asks; for the life of the scope. `reuseForMs`: for tests. Not the
 * conventions' v8js.gc.duration, whose observer costs a callback per collection (the same page);
 * a long collection shows in the delay.
 */
export const observeRuntime = (options: { readonly reuseForMs?: number } = {}) => Effect.gen(function*() {
  const { meter } = yield* Metrics
  const memory = meter.createObservableUpDownCounter("process.memory.usage", {
    unit: "By",
    description: "The process's resident memory (its resident set, as the kernel counts it)."
  })
  const cpu = meter.createObservableCounter("process.cpu.time", {
    unit: "s",
    description: "CPU time the process used, by mode: user or system."
  })
  const heapUsed = meter.createObservableUpDownCounter("v8js.memory.heap.used", {
    unit: "By",
    description: "What the live and not yet collected objects of a V8 heap space take."
  })
  const heapLimit = meter.createObservableUpDownCounter("v8js.memory.heap.limit", {
    unit: "By",
    description: "The size V8 has reserved for a heap space."
  })
  // Not in the conventions, whose v8js.memory.heap.limit is what a space has reserved so far.
  const heapMax = meter.createObservableUpDownCounter("portfolio.runtime.heap.max", {
    unit: "By",
    description: "The most V8's heap may take (the old generation's cap and the young generation): past it the process ends, out of memory."
  })
  const loopTime = meter.createObservableCounter("nodejs.eventloop.time", {
    unit: "s",
    description: "Time the event loop spent running code (active) or waiting for events (idle)."
  })
  const delay = monitorEventLoopDelay({ resolution: DelayResolutionMs })
  const delays = DelayStatistics.map(({ name, what, of }) => ({
    gauge: meter.createObservableGauge(`nodejs.eventloop.delay.${name}`, { unit: "s", description: `The event loop's ${what} delay since the last reading.` }),
    of
  }))
  yield* Effect.acquireRelease(Effect.sync(() => delay.enable()), () => Effect.sync(() => delay.disable()))

  const user = { "cpu.mode": "user" }
  const system = { "cpu.mode": "system" }
  const active = { "nodejs.eventloop.state": "active" }
  const idle = { "nodejs.eventloop.state": "idle" }
  yield* observe({
    instruments: [memory, cpu, heapUsed, heapLimit, heapMax, loopTime, ...delays.map(({ gauge }) => gauge)],
    read: Effect.sync(() => {
      const reading = {
        rss: process.memoryUsage.rss(),
        cpu: process.cpuUsage(),
        spaces: getHeapSpaceStatistics(),
        heapMax: getHeapStatistics().heap_size_limit,
        loop: performance.eventLoopUtilization(),
        // Percentiles of no sample are 0; a reading of an idle loop's window has a few anyway.
        delays: delays.map(({ of }) => of(delay))
      }
      delay.reset()
      return reading
    }),
    reuseFor: options.reuseForMs ?? ReuseForMs,
    report: (observed, reading) => {
      observed.observe(memory, reading.rss)
      // process.cpuUsage() is in microseconds.
      observed.observe(cpu, reading.cpu.user / 1e6, user)
      observed.observe(cpu, reading.cpu.system / 1e6, system)
      for (const space of reading.spaces) {
        const named = { "v8js.heap.space.name": space.space_name }
        observed.observe(heapUsed, space.space_used_size, named)
        observed.observe(heapLimit, space.space_size, named)
      }
      observed.observe(heapMax, reading.heapMax)
      observed.observe(loopTime, secondsOfMs(reading.loop.active), active)
      observed.observe(loopTime, secondsOfMs(reading.loop.idle), idle)
      delays.forEach(({ gauge }, i) => observed.observe(gauge, delaySecondsOfNs(reading.delays[i]!)))
    }
  })
})
