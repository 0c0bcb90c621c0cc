import { type ApplicationFilters, LinkedApplication, RegulationTokens } from "@portfolio/domain"
import { Effect, Layer, Option, Stream } from "effect"
import type { ApplicationRecord } from "../../src/domain/ApplicationRecord.js"
import { ApplicationRepository, type ListedApplications, type ListedLinked, linkedVersion } from "../../src/ports/ApplicationRepository.js"
import { byCode, keysetByCode, MemoryStore, type TenantState } from "./MemoryStore.js"

const countBy = (records: ReadonlyArray<ApplicationRecord>, key: "criticality" | "dataClassification" | "status") =>
  records.reduce<Record<string, number>>((acc, record) => ({ ...acc, [record[key]]: (acc[record[key]] ?? 0) + 1 }), {})

/** Stored as PostgreSQL reads them back: regulations once each, in the catalogue's order. */
const stored = (record: ApplicationRecord): ApplicationRecord => ({
  ...record,
  regulations: RegulationTokens.filter((token) => record.regulations.includes(token))
})

const matching = (state: TenantState, filters: ApplicationFilters) =>
  [...state.applications.values()]
    .filter((record) =>
      (filters.data_class === undefined || record.dataClassification === filters.data_class) &&
      (filters.criticality === undefined || record.criticality === filters.criticality) &&
      (filters.status === undefined || record.status === filters.status) &&
      (filters.regulation === undefined || record.regulations.includes(filters.regulation))
    )
    .sort(byCode)

/** The store's application writes so far: each takes the next as its write sequence, as PostgreSQL's sequence numbers them. */
let applicationWrites = 0

const written = (state: TenantState, record: ApplicationRecord) => {
  state.applications.set(record.code, stored(record))
  state.applicationWriteSeqs.set(record.code, ++applicationWrites)
}

export const ApplicationRepositoryMemory = Layer.effect(
  ApplicationRepository,
  Effect.map(MemoryStore, ({ read, write }) =>
    ApplicationRepository.of({
      list: (tenantId, filters, page) => read(tenantId, (state) => keysetByCode(matching(state, filters), page)),
      listAllChanged: (tenantId, filters, held, size) =>
        Stream.unwrap(read(tenantId, (state) => {
          const all = matching(state, filters)
          const wanted = all.filter((record) => !held(record.code, record.revision))
          return Stream.fromIterable<ListedApplications>([
            { _tag: "Order", order: all.map((record) => ({ code: record.code, revision: record.revision })) },
            ...Array.from({ length: Math.ceil(wanted.length / size) }, (_, i) => ({ _tag: "Records" as const, records: wanted.slice(i * size, (i + 1) * size) }))
          ])
        })),
      find: (tenantId, code) => read(tenantId, (state) => Option.fromNullishOr(state.applications.get(code))),
      exists: (tenantId, code) => read(tenantId, (state) => state.applications.has(code)),
      ancestorCodes: (tenantId, code) =>
        read(tenantId, (state) => {
          const codes: Array<string> = []
          let parent = state.applications.get(code)?.parentCode ?? null
          while (parent !== null) {
            codes.push(parent)
            parent = state.applications.get(parent)?.parentCode ?? null
          }
          return codes
        }),
      count: (tenantId) => read(tenantId, (state) => state.applications.size),
      listLinkedChanged: (tenantId, first, holding) =>
        Stream.unwrap(read(tenantId, (state) => {
          const linkedOf = (application: ApplicationRecord) => {
            const parent = application.parentCode === null ? undefined : state.applications.get(application.parentCode)
            return {
              application: new LinkedApplication({
                code: application.code,
                name: application.name,
                parentCode: application.parentCode,
                parentName: parent?.name ?? null,
                criticality: application.criticality
              }),
              version: linkedVersion(application.revision, parent?.revision ?? null)
            }
          }
          const writeSeq = Math.max(0, ...state.applicationWriteSeqs.values())
          const named = new Set(first)
          const all = [...state.applications.values()]
          if (holding === undefined || writeSeq < holding.writeSeq) {
            const linked = all.map(linkedOf)
            return Stream.fromIterable<ListedLinked>([
              { _tag: "WriteSeq", writeSeq },
              ...(first.length > 0 ? [{ _tag: "Linked" as const, applications: linked.filter(({ application }) => named.has(application.code)) }] : []),
              { _tag: "Linked", applications: linked.filter(({ application }) => !named.has(application.code)) }
            ])
          }
          const writtenSince = (code: string | null) => code !== null && (state.applicationWriteSeqs.get(code) ?? 0) > holding.writeSeq
          const moved = all.filter((application) => writtenSince(application.code) || writtenSince(application.parentCode)).map(linkedOf)
          const wanted = moved.filter(({ application, version }) => !holding.held(application.code, version))
          const early = wanted.filter(({ application }) => named.has(application.code))
          const late = wanted.filter(({ application }) => !named.has(application.code))
          return Stream.fromIterable<ListedLinked>([
            { _tag: "WriteSeq", writeSeq },
            { _tag: "Versions", versions: moved.map(({ application, version }) => ({ code: application.code, version })) },
            ...[early, late].flatMap((applications) => applications.length > 0 ? [{ _tag: "Linked" as const, applications }] : [])
          ])
        })),
      counts: (tenantId) =>
        read(tenantId, (state) => {
          const applications = [...state.applications.values()]
          return {
            applicationCount: applications.length,
            applicationsByCriticality: countBy(applications, "criticality"),
            applicationsByDataClassification: countBy(applications, "dataClassification"),
            applicationsByStatus: countBy(applications, "status")
          }
        }),
      insert: (tenantId, record) => write(tenantId, (state) => written(state, record)),
      update: (tenantId, record) => write(tenantId, (state) => written(state, record)),
      insertMany: (tenantId, records) =>
        write(tenantId, (state) => {
          for (const record of records) written(state, record)
        }),
      appendChanges: (tenantId, entries) => write(tenantId, (state) => void state.changes.push(...entries)),
      listChanges: (tenantId, code, limit, after) =>
        read(tenantId, (state) => {
          if (!state.applications.has(code)) return Option.none()
          const entries = state.changes.map((entry, seq) => ({ entry, seq })).filter(({ entry }) => entry.applicationCode === code)
          // As PostgreSQL's row comparison: an entry the position does not name leaves its ties of time out.
          const afterSeq = after === undefined ? undefined : entries.find(({ entry }) => entry.id === after.id)?.seq ?? Number.NaN
          const page = entries
            .filter(({ entry, seq }) =>
              after === undefined || entry.changedAt.epochMilliseconds < after.changedAtMillis ||
              (entry.changedAt.epochMilliseconds === after.changedAtMillis && seq < afterSeq!))
            .sort((a, b) => b.entry.changedAt.epochMilliseconds - a.entry.changedAt.epochMilliseconds || b.seq - a.seq)
            .slice(0, limit)
            .map(({ entry }) => entry)
          return Option.some(page)
        })
    }))
)
