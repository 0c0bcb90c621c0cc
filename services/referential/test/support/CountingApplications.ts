import { Effect, Layer, Stream } from "effect"
import { ApplicationRepository, type ApplicationRepositoryShape } from "../../src/ports/ApplicationRepository.js"

type Streamed = "listAllChanged" | "listLinkedChanged"
type Listed<K extends Streamed> = Stream.Success<ReturnType<ApplicationRepositoryShape[K]>>

/**
 * The repository with `method` counted: each call pushes to `counts` how many items `count` finds
 * in what its stream gave (the records or applications read, not those the caller held).
 */
export const countingApplications = <K extends Streamed>(method: K, count: (listed: Listed<K>) => number, counts: Array<number>) =>
  Layer.effect(
    ApplicationRepository,
    Effect.map(ApplicationRepository, (inner): ApplicationRepositoryShape => {
      const listing = inner[method] as (...args: ReadonlyArray<unknown>) => Stream.Stream<Listed<K>>
      const counted = (...args: ReadonlyArray<unknown>) =>
        Stream.suspend(() => {
          counts.push(0)
          return Stream.tap(listing(...args), (listed) =>
            Effect.sync(() => {
              counts[counts.length - 1]! += count(listed)
            }))
        })
      return { ...inner, [method]: counted }
    })
  )
