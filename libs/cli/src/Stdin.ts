import { InvalidRequest } from "@portfolio/domain"
import { Context, Effect, Layer } from "effect"
import { text } from "node:stream/consumers"

/** Where `portfolio app put` reads its document when no `--file` is given. */
export class Stdin extends Context.Tag("@portfolio/cli/Stdin")<Stdin, { readonly readAll: Effect.Effect<string, InvalidRequest> }>() {
  static readonly node = Layer.succeed(Stdin, {
    readAll: Effect.suspend(() =>
      process.stdin.isTTY
        // Waiting on a terminal would look like a hang: say what is expected instead.
        ? Effect.fail(new InvalidRequest({ detail: "No --file given and nothing piped on stdin: pipe the JSON document or pass --file." }))
        : Effect.tryPromise({
          try: () => text(process.stdin),
          catch: (error) => new InvalidRequest({ detail: `Cannot read stdin: ${String(error)}` })
        })
    )
  })
}
