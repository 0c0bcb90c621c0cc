import { type JetStreamClient, JetStreamApiCodes, JetStreamApiError } from "@nats-io/jetstream"

/**
 * Whether a nats-server of `version` checks a write's expected last subject sequence where the
 * write is applied, on a replicated stream as on a single server: from 2.9.21 on, and in every 2.10
 * and later. Before, a replicated stream checked a non-zero one only on its leader, before proposing
 * the write, against the writes applied so far: two compare-and-sets based on the same revision,
 * both proposed before the first was applied, were both taken, the second overwriting the first.
 * On a three-server cluster of Debian 12's 2.9.10, two connections writing one key at once, each
 * based on its latest revision, had both writes taken in 11 to 32 rounds of 50.
 */
export const checksRevisionWhereApplied = (version: string | undefined): boolean => {
  const parsed = /^(\d+)\.(\d+)\.(\d+)/.exec(version ?? "")
  if (parsed === null) return false
  const [major, minor, patch] = [Number(parsed[1]), Number(parsed[2]), Number(parsed[3])]
  return major > 2 || (major === 2 && (minor > 9 || (minor === 9 && patch >= 21)))
}

/** A compare-and-set that another write based on the same revision beat (answered as a duplicate). */
export class RevisionTaken extends Error {}

/** Another replica wrote the key since it was read: JetStream's "wrong last sequence", or `RevisionTaken`. */
export const isConflict = (error: unknown) =>
  error instanceof RevisionTaken ||
  (error instanceof JetStreamApiError &&
    (error.code === JetStreamApiCodes.StreamWrongLastSequence || error.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown))

/**
 * Writes `value` as `kvKey`'s next revision if its latest is still `previousSeq`, and answers that
 * revision, as `kv.put` with `previousSeq` does; a conflict throws (`isConflict`).
 *
 * A write taken over another is a write lost: the requests it counted and the room it reserved are
 * gone from the log, and handed out again. So where the server does not check the revision where
 * the write is applied (`checksRevisionWhereApplied`), the write also carries a message id of the
 * key and the revision it is based on: the stream's deduplication, which such a server applies in
 * order on every copy, then takes only the first write based on a revision and answers the others
 * as duplicates. Only there: a later server records the message id before it proposes the write,
 * and one whose proposal failed (its leader lost meanwhile) would answer the next write based on
 * that same revision, still the latest, as a duplicate for the whole deduplication window.
 */
export const makeCompareAndSet = (js: JetStreamClient, bucket: string, serverVersion: () => string | undefined) =>
  async (kvKey: string, value: Uint8Array, previousSeq: number): Promise<number> => {
    // Every server checks a write based on no revision (the key is new) where it is applied.
    const msgID = previousSeq > 0 && !checksRevisionWhereApplied(serverVersion()) ? `${kvKey}@${previousSeq}` : undefined
    const ack = await js.publish(`$KV.${bucket}.${kvKey}`, value, { expect: { lastSubjectSequence: previousSeq }, ...(msgID === undefined ? {} : { msgID }) })
    if (ack.duplicate) throw new RevisionTaken(`revision ${previousSeq} was written over first (sequence ${ack.seq})`)
    return ack.seq
  }
