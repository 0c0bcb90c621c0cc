import { expect, layer } from "@effect/vitest"
import { UnitOfWork } from "@portfolio/platform/sql"
import { Effect, Option } from "effect"
import type { MailMessage } from "../../src/domain/InvitationMail.js"
import { MailArchive } from "../../src/ports/MailArchive.js"
import { Mailer } from "../../src/ports/Mailer.js"
import { adaptersUnderTest } from "../support/AdaptersUnderTest.js"

const message = (to: string, n: number): MailMessage => ({
  to,
  subject: `Message ${n}`,
  text: `Plain text ${n}\nwith two lines`,
  html: `<p>HTML ${n} &amp; more</p>`
})

/** The archive's view of a message: what was sent, without the id and time it was stored with. */
const content = ({ html, subject, text, to }: MailMessage) => ({ to, subject, text, html })

// Mailer and MailArchive in one suite: the archive is how the kept mail is read.
for (const adapters of adaptersUnderTest) {
  layer(adapters.layer, { timeout: 60_000, excludeTestServices: true })(`Mailer and MailArchive contract, ${adapters.name}`, (it) => {
    it.effect("lists what was sent, newest first, at most `limit`, for one recipient in any case or for all", () =>
      Effect.gen(function*() {
        const mailer = yield* Mailer
        const archive = yield* MailArchive
        const sent = [message("List@Mail.test", 1), message("list@mail.test", 2), message("other@mail.test", 3)]
        for (const m of sent) yield* mailer.send(m)
        const forList = yield* archive.list(Option.some("LIST@mail.test"), 50)
        expect(forList.map(content)).toEqual([sent[1], sent[0]])
        expect(forList[0]!.id).toBeGreaterThan(forList[1]!.id)
        expect((yield* archive.list(Option.some("list@mail.test"), 1)).map(content)).toEqual([sent[1]])
        expect((yield* archive.list(Option.none(), 2)).map(content)).toEqual([sent[2], sent[1]])
        expect(yield* archive.list(Option.some("nobody@mail.test"), 50)).toEqual([])
      }))

    it.effect("keeps nothing sent in a unit of work that fails", () =>
      Effect.gen(function*() {
        const mailer = yield* Mailer
        const unitOfWork = yield* UnitOfWork
        yield* Effect.flip(unitOfWork.run(Effect.andThen(mailer.send(message("undone@mail.test", 4)), Effect.fail("refused" as const))))
        expect(yield* Effect.flatMap(MailArchive, (archive) => archive.list(Option.some("undone@mail.test"), 50))).toEqual([])
      }))
  })
}
