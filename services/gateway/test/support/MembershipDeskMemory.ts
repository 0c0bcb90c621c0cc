import { type ArbRole, Unavailable } from "@portfolio/domain"
import { Context, Effect, HashMap, Layer, Option, Ref } from "effect"
import { type CurrentMember, MembershipDesk } from "../../src/ports/MembershipDesk.js"

const key = (tenantId: string, userSub: string) => `${tenantId} ${userSub}`

/**
 * The record of memberships in memory, as provisioning would answer it: the cases make members join
 * (with a role), change role and leave, and can make the record unreachable.
 */
export class MembershipDeskMemory extends Context.Service<MembershipDeskMemory>()("test/MembershipDeskMemory", {
  make: Effect.gen(function*() {
    const members = yield* Ref.make(HashMap.empty<string, CurrentMember>())
    const down = yield* Ref.make(false)
    const port = MembershipDesk.of({
      current: (tenantId, userSub) =>
        Effect.flatMap(Ref.get(down), (isDown) =>
          isDown
            ? Effect.fail(new Unavailable({ detail: "The record of the tenant's members is unavailable; retry shortly." }))
            : Effect.map(Ref.get(members), HashMap.get(key(tenantId, userSub))))
    })
    return {
      port,
      /** An active member with this role, now (again, after a removal: a new membership). */
      join: (member: { readonly tenantId: string; readonly userSub: string; readonly email: string; readonly role: ArbRole }) =>
        Ref.update(members, HashMap.set(key(member.tenantId, member.userSub), { email: member.email, role: member.role })),
      leave: (tenantId: string, userSub: string) => Ref.update(members, HashMap.remove(key(tenantId, userSub))),
      isMember: (tenantId: string, userSub: string) => Effect.map(Ref.get(members), (all) => Option.isSome(HashMap.get(all, key(tenantId, userSub)))),
      setDown: (value: boolean) => Ref.set(down, value)
    }
  })
}) {
  /** The double, and the port it answers as. */
  static readonly layer = Layer.effect(MembershipDesk, Effect.map(MembershipDeskMemory, (m) => m.port)).pipe(Layer.provideMerge(Layer.effect(MembershipDeskMemory, MembershipDeskMemory.make)))
}
