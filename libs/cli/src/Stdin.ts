import { InvalidRequest } from "@portfolio/domain"
import { Context, Effect, Layer } from "effect"
import { text } from "node:stream/consumers"

/**
 * Where `portfolio app put` reads its document when no `--file` is given, and `portfolio sso set`
 * its client secret with `--client-secret-file -`. `whenTerminal` is the refusal when nothing is
 * piped, in the words of the command that reads.
 */
export class Stdin extends Context.Service<Stdin, {
  readonly readAll: (whenTerminal: string) => Effect.Effect<string, InvalidRequest>
}>()("@portfolio/cli/Stdin") {
  static readonly layer = Layer.succeed(Stdin, {
    readAll: (whenTerminal) => Effect.suspend(() =>
      process.stdin.isTTY
        // Waiting on a terminal would look like a hang: say what is expected instead.
        ? Effect.fail(new InvalidRequest({ detail: whenTerminal }))
        : Effect.tryPromise({
          try: () => text(process.stdin),
          catch: (error) => new InvalidRequest({ detail: `Cannot read stdin: ${String(error)}` })
        })
    )
  })
}
