import type { Page } from "@portfolio/platform/http"
import { Effect, Option } from "effect"

/** Every page of a list, each asked for with the cursor of the page before it, and how many pages that took. */
export const allPages = <A, E, R>(page: (cursor: string | undefined) => Effect.Effect<Page<A>, E, R>) =>
  Effect.gen(function*() {
    const items: Array<A> = []
    let cursor: string | undefined = undefined
    let pages = 0
    do {
      const answer: Page<A> = yield* page(cursor)
      items.push(...answer.items)
      pages++
      cursor = Option.getOrUndefined(answer.next)
    } while (cursor !== undefined)
    return { items, pages }
  })
