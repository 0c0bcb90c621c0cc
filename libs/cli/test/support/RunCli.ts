import { FetchHttpClient } from "effect/http"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { isControlCharacter } from "@portfolio/domain"
import { ErrorsUrl } from "@portfolio/platform/http"
import { Console, Effect, Layer, Option, Redacted } from "effect"
import { AdminClients } from "../../src/AdminClients.js"
import { runCli } from "../../src/Commands.js"
import { OperatorSettings } from "../../src/OperatorSettings.js"
import { Stdin } from "../../src/Stdin.js"
import { FakeAdmin, FakeSecret } from "./FakeAdminApis.js"
import { FakeWebhookAdmin } from "./FakeWebhookAdminApi.js"

export const TestOperator = "operator:test-user"
export const TestErrorsUrl = "https://errors.test/api"

export interface CliRun {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** `portfolio <args>` in process against the fake admin APIs, its stdout and stderr captured. */
export const portfolio = (args: ReadonlyArray<string>, stdin = "") =>
  Effect.gen(function*() {
    const { urls } = yield* FakeAdmin
    // Only the webhook tests serve the dispatcher's fake; elsewhere its URL is one nothing answers.
    const webhook = yield* Effect.serviceOption(FakeWebhookAdmin)
    const stdout: Array<string> = []
    const stderr: Array<string> = []
    const base = yield* Console.Console
    const captured: Console.Console = {
      ...base,
      log: (...parts) => void stdout.push(parts.join(" ")),
      error: (...parts) => void stderr.push(parts.join(" "))
    }
    const config = Layer.succeed(OperatorSettings, {
      secret: Redacted.make(FakeSecret),
      operator: TestOperator,
      gatewayAdminUrl: urls.gateway,
      provisioningAdminUrl: urls.provisioning,
      referentialAdminUrl: urls.referential,
      webhookAdminUrl: Option.match(webhook, { onNone: () => "http://127.0.0.1:9", onSome: ({ url }) => url }),
      consoleAdminUrl: urls.console
    })
    const clients = AdminClients.layer.pipe(Layer.provide(config), Layer.provide(FetchHttpClient.layer))
    const code = yield* runCli(["node", "portfolio", ...args], clients).pipe(
      Effect.provideService(Console.Console, captured),
      Effect.provide(Layer.mergeAll(
        NodeServices.layer,
        Layer.succeed(Stdin, { readAll: () => Effect.succeed(stdin) }),
        Layer.succeed(ErrorsUrl, TestErrorsUrl)
      ))
    )
    return { code, stdout: stdout.join("\n"), stderr: stderr.join("\n") } satisfies CliRun
  })

/** The problem the CLI prints on stderr when a service refuses, as the fake's services word it. */
export const problem = (errorCode: string, slug: string, title: string, status: number, detail: string) => ({
  type: `${TestErrorsUrl}/${slug}`,
  title,
  status,
  detail,
  errorCode
})

/** The characters of an output's lines that a terminal would act on instead of showing (none, ever). */
export const controlCharactersIn = (output: string) =>
  output.split("\n").flatMap((line) => [...line].filter((c) => isControlCharacter(c.codePointAt(0)!)))
