/**
 * Part of `npm run bench`: the least a durable webhook delivery can cost on this machine, so that
 * the dispatcher's figure can be read against what any design would reach here, not only against
 * a bare POST loop that records nothing.
 *
 * A process of its own, like the dispatcher, doing only what a delivery that survives a crash must
 * do: take the event from a JetStream durable, sign it for each subscription (both schemes), POST
 * it with the same headers and the same concurrency (8 per subscription, 32 in all), record the
 * event, the delivery and its attempt in the dispatcher's table layout (indexes included) in one
 * statement per batch, and acknowledge the message once all its deliveries are recorded. What it
 * leaves out is what the dispatcher adds: traces, metrics, leases, retries, failure counts, the
 * subscription's state read from the database, sealed secrets, an answer's body kept.
 *
 * Environment: DATABASE_URL, NATS_URL, FLOOR_STREAM, FLOOR_DURABLE, FLOOR_TARGETS (JSON array of
 * { id, url, key } with the key in base64), FLOOR_EVENTS (how many to handle before it exits).
 * Prints "ready" once it listens, "done" once every delivery is recorded and acknowledged, and runs
 * until it is killed.
 */
import { createHmac, randomUUID } from "node:crypto"
import { connect } from "@nats-io/transport-node"
import { type JsMsg, jetstream } from "@nats-io/jetstream"
import pg from "pg"
import { Agent, type Dispatcher } from "undici"

const env = (name: string) => {
  const value = process.env[name]
  if (value === undefined) throw new Error(`${name} is required`)
  return value
}
const PerSubscription = 8
const Concurrency = 32
/** Rows one statement takes at most, as the dispatcher's batches. */
const MaxRows = 256

interface Target {
  readonly id: string
  readonly url: string
  readonly key: Buffer
  readonly origin: string
  readonly path: string
  inFlight: number
  readonly waiting: Array<() => void>
}
interface Held {
  readonly message: JsMsg
  left: number
}
interface Row {
  readonly event: { readonly id: string; readonly tenantId: string; readonly type: string; readonly body: string; readonly createdAt: string }
  readonly held: Held
  readonly attempt: { readonly d: string; readonly e: string; readonly s: string; readonly a: string; readonly at: string; readonly ms: number; readonly sc: number }
}

const targets: Array<Target> = (JSON.parse(env("FLOOR_TARGETS")) as Array<{ id: string; url: string; key: string }>).map((t) => {
  const url = new URL(t.url)
  return { id: t.id, url: t.url, key: Buffer.from(t.key, "base64"), origin: url.origin, path: url.pathname, inFlight: 0, waiting: [] }
})
const expected = Number(env("FLOOR_EVENTS"))
const db = new pg.Pool({ connectionString: env("DATABASE_URL"), max: 2 })
const agent = new Agent({})

await db.query(`
  DROP SCHEMA IF EXISTS bench_floor CASCADE;
  CREATE SCHEMA bench_floor;
  CREATE TABLE bench_floor.events (id uuid PRIMARY KEY, tenant_id uuid NOT NULL, type text NOT NULL, body text NOT NULL,
    traceparent text, created_at timestamptz NOT NULL, received_at timestamptz NOT NULL DEFAULT now());
  CREATE TABLE bench_floor.deliveries (id uuid PRIMARY KEY, event_id uuid NOT NULL REFERENCES bench_floor.events (id),
    subscription_id uuid NOT NULL, status text NOT NULL, failure_reason text, attempts integer NOT NULL DEFAULT 0,
    round_attempts integer NOT NULL DEFAULT 0, next_attempt_at timestamptz, lease_until timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(), updated_at timestamptz NOT NULL DEFAULT now(), UNIQUE (event_id, subscription_id));
  CREATE INDEX deliveries_due ON bench_floor.deliveries (next_attempt_at) WHERE status = 'pending';
  CREATE INDEX deliveries_subscription ON bench_floor.deliveries (subscription_id, created_at DESC);
  CREATE TABLE bench_floor.attempts (id uuid PRIMARY KEY, delivery_id uuid NOT NULL REFERENCES bench_floor.deliveries (id),
    attempt integer NOT NULL, started_at timestamptz NOT NULL, duration_ms integer NOT NULL, status_code integer, error text,
    response_body text NOT NULL, UNIQUE (delivery_id, attempt));`)

const rows: Array<Row> = []
let writing = false
let recorded = 0
const write = async () => {
  if (writing) return
  writing = true
  while (rows.length > 0) {
    const batch = rows.splice(0, MaxRows)
    const events = [...new Map(batch.map((r) => [r.event.id, r.event])).values()]
    await db.query(
      `WITH kept AS (
         INSERT INTO bench_floor.events (id, tenant_id, type, body, created_at)
         SELECT id, "tenantId", type, body, "createdAt"
         FROM json_to_recordset($1::json) AS e(id uuid, "tenantId" uuid, type text, body text, "createdAt" timestamptz)
         ON CONFLICT (id) DO NOTHING
       ), batch AS (
         SELECT * FROM json_to_recordset($2::json) AS b(d uuid, e uuid, s uuid, a uuid, at timestamptz, ms int, sc int)
       ), created AS (
         INSERT INTO bench_floor.deliveries (id, event_id, subscription_id, status, attempts, round_attempts)
         SELECT d, e, s, 'succeeded', 1, 1 FROM batch ON CONFLICT (event_id, subscription_id) DO NOTHING RETURNING id
       )
       INSERT INTO bench_floor.attempts (id, delivery_id, attempt, started_at, duration_ms, status_code, response_body)
       SELECT a, d, 1, at, ms, sc, '' FROM batch WHERE d IN (SELECT id FROM created)`,
      [JSON.stringify(events), JSON.stringify(batch.map((r) => r.attempt))]
    )
    for (const row of batch) {
      if (--row.held.left === 0) row.held.message.ack()
    }
    recorded += batch.length
  }
  writing = false
  // Left running, its connections open, until killed: the bench reads their CPU time after this.
  if (recorded === expected * targets.length) process.stdout.write("done\n")
}
// Successes are written every 2 ms under load, as the dispatcher's are.
setInterval(() => void write(), 2)

class Post implements Dispatcher.DispatchHandler {
  private status = 0
  constructor(private readonly done: (status: number) => void) {}
  onRequestStart() {}
  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number) {
    this.status = statusCode
  }
  onResponseData() {}
  onResponseEnd() {
    this.done(this.status)
  }
  onResponseError() {
    this.done(0)
  }
}

let inFlight = 0
const post = (target: Target, event: Row["event"], bytes: Buffer, held: Held) => {
  target.inFlight++
  inFlight++
  const started = new Date()
  const seconds = String(Math.floor(started.getTime() / 1000))
  const attemptId = randomUUID()
  const headers = {
    "content-type": "application/json",
    "user-agent": "ArchitecturePortfolio-Webhooks/1.0 (+https://github.com/architecture-portfolio)",
    "x-service-signature": `sha256=${createHmac("sha256", target.key).update(`${seconds}.`).update(bytes).digest("hex")}`,
    "x-service-timestamp": seconds,
    "x-service-event": event.type,
    "x-service-event-id": event.id,
    "x-service-delivery-id": attemptId,
    "webhook-id": event.id,
    "webhook-timestamp": seconds,
    "webhook-signature": `v1,${createHmac("sha256", target.key).update(`${event.id}.${seconds}.`).update(bytes).digest("base64")}`
  }
  const t0 = performance.now()
  agent.dispatch({ origin: target.origin, path: target.path, method: "POST", headers, body: event.body }, new Post((status) => {
    target.inFlight--
    inFlight--
    rows.push({
      event,
      held,
      attempt: { d: randomUUID(), e: event.id, s: target.id, a: attemptId, at: started.toISOString(), ms: Math.round(performance.now() - t0), sc: status }
    })
    if (rows.length >= MaxRows) void write()
    const next = target.waiting.shift() ?? targets.find((t) => t.waiting.length > 0 && t.inFlight < PerSubscription)?.waiting.shift()
    next?.()
  }))
}

const nc = await connect({ servers: env("NATS_URL") })
const consumer = await jetstream(nc).consumers.get(env("FLOOR_STREAM"), env("FLOOR_DURABLE"))
const messages = await consumer.consume({ max_messages: 256 })
process.stdout.write("ready\n")
// Memory stays bounded as in the dispatcher: no more read from the broker while this many wait.
const MaxWaiting = 1_024
let waiting = 0
let resumeReading: (() => void) | undefined
for await (const message of messages) {
  const body = message.string()
  const parsed = JSON.parse(body) as { id: string; tenantId: string; type: string; createdAt: string }
  const event = { id: parsed.id, tenantId: parsed.tenantId, type: parsed.type, body, createdAt: parsed.createdAt }
  const bytes = Buffer.from(body, "utf8")
  const held: Held = { message, left: targets.length }
  for (const target of targets) {
    if (target.inFlight < PerSubscription && inFlight < Concurrency) post(target, event, bytes, held)
    else {
      waiting++
      target.waiting.push(() => {
        waiting--
        post(target, event, bytes, held)
        if (waiting < MaxWaiting / 2) resumeReading?.()
      })
    }
  }
  if (waiting >= MaxWaiting) await new Promise<void>((resolve) => (resumeReading = resolve))
  resumeReading = undefined
}
