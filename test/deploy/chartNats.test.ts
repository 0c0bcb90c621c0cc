import { describe, expect, it } from "vitest"
import { chart, container, envOf, find, type K8sObject, minimal, useHelm } from "./chartRendering.js"
import { invalid } from "./kubernetesSchemas.js"

// NATS credentials, TLS files, the previous internal secret and the gateway's degraded rate limit:
// what each install option renders into the pods (chart.test.ts covers the rest).
const { helmRun, render } = useHelm()

const deployment = (objects: ReadonlyArray<K8sObject>, component: string) => find(objects, "Deployment", `rel-architecture-portfolio-${component}`)
const natsVariables = (objects: ReadonlyArray<K8sObject>, component: string) =>
  container(deployment(objects, component)).env.map((e: { name: string }) => e.name).filter((name: string) => name.startsWith("NATS_") && name !== "NATS_URL" && name !== "NATS_REPLICAS")
const chartSecret = (objects: ReadonlyArray<K8sObject>) => find(objects, "Secret", "rel-architecture-portfolio")
const decoded = (objects: ReadonlyArray<K8sObject>, key: string) => Buffer.from(chartSecret(objects).data[key], "base64").toString()

describe("NATS credentials", () => {
  it("gives every service its own identity, inline values kept in the chart's Secret", async () => {
    const objects = await render(
      "--set", "nats.auth.method=userPassword",
      "--set", "nats.auth.gateway.user=gw", "--set", "nats.auth.gateway.value=gw-password",
      "--set", "nats.auth.provisioning.user=prov", "--set", "nats.auth.provisioning.value=prov-password",
      "--set", "nats.auth.referential.user=ref", "--set", "nats.auth.referential.value=ref-password",
      "--set", "nats.auth.webhookDispatcher.user=hooks", "--set", "nats.auth.webhookDispatcher.value=hooks-password"
    )
    for (const [component, user] of [["gateway", "gw"], ["provisioning", "prov"], ["referential", "ref"], ["webhook-dispatcher", "hooks"]] as const) {
      expect(envOf(deployment(objects, component), "NATS_USER").value).toBe(user)
      expect(envOf(deployment(objects, component), "NATS_PASSWORD").valueFrom).toEqual({
        secretKeyRef: { name: "rel-architecture-portfolio", key: `nats-${component}-credential` }
      })
      expect(decoded(objects, `nats-${component}-credential`)).toBe(`${user}-password`)
    }
  })

  it("takes NATS_URL from an existing Secret when one is named, in every service using NATS and their migrations", async () => {
    const objects = await render("--set", "nats.existingSecret=platform-endpoints", "--set", "nats.existingSecretKey=nats")
    for (const component of ["gateway", "provisioning", "referential", "webhook-dispatcher"]) {
      expect(envOf(deployment(objects, component), "NATS_URL")).toEqual({ name: "NATS_URL", valueFrom: { secretKeyRef: { name: "platform-endpoints", key: "nats" } } })
    }
    expect(envOf(deployment(objects, "console"), "NATS_URL")).toBeUndefined()
    const migrations = find(objects, "Job", "rel-architecture-portfolio-migrations").spec.template.spec.containers
    expect(migrations.find((c: any) => c.name === "gateway").env.find((e: any) => e.name === "NATS_URL").valueFrom).toEqual({ secretKeyRef: { name: "platform-endpoints", key: "nats" } })
    expect(invalid(objects)).toEqual([])
    const inline = await render()
    expect(envOf(deployment(inline, "gateway"), "NATS_URL")).toEqual({ name: "NATS_URL", value: "nats://nats:4222" })
  })

  it("takes a token from an existing Secret, creating no key for it", async () => {
    const objects = await render(
      "--set", "nats.auth.method=token",
      "--set", "nats.auth.gateway.existingSecret=nats-gw", "--set", "nats.auth.gateway.existingSecretKey=token",
      "--set", "nats.auth.provisioning.existingSecret=nats-prov", "--set", "nats.auth.referential.existingSecret=nats-ref",
      "--set", "nats.auth.webhookDispatcher.existingSecret=nats-hooks"
    )
    expect(envOf(deployment(objects, "gateway"), "NATS_TOKEN").valueFrom).toEqual({ secretKeyRef: { name: "nats-gw", key: "token" } })
    expect(envOf(deployment(objects, "webhook-dispatcher"), "NATS_TOKEN").valueFrom).toEqual({ secretKeyRef: { name: "nats-hooks", key: "nats-credential" } })
    expect(envOf(deployment(objects, "provisioning"), "NATS_TOKEN").valueFrom).toEqual({ secretKeyRef: { name: "nats-prov", key: "nats-credential" } })
    expect(envOf(deployment(objects, "referential"), "NATS_TOKEN").valueFrom).toEqual({ secretKeyRef: { name: "nats-ref", key: "nats-credential" } })
    expect(Object.keys(chartSecret(objects).data).filter((key) => key.startsWith("nats-"))).toEqual([])
  })

  it.each([["creds", "NATS_CREDS_FILE"], ["nkey", "NATS_NKEY_SEED_FILE"]] as const)(
    "mounts the %s file read-only from its Secret and names it in %s",
    async (method, variable) => {
      const objects = await render(
        "--set", `nats.auth.method=${method}`,
        "--set", "nats.auth.gateway.existingSecret=nats-gw", "--set", "nats.auth.provisioning.existingSecret=nats-prov",
        "--set", "nats.auth.referential.existingSecret=nats-ref", "--set", "nats.auth.webhookDispatcher.existingSecret=nats-hooks"
      )
      for (const [component, secretName] of [["gateway", "nats-gw"], ["provisioning", "nats-prov"], ["referential", "nats-ref"], ["webhook-dispatcher", "nats-hooks"]] as const) {
        const pod = deployment(objects, component).spec.template.spec
        expect(natsVariables(objects, component)).toEqual([variable])
        expect(envOf(deployment(objects, component), variable).value).toBe("/etc/portfolio/nats-auth/credential")
        expect(container(deployment(objects, component)).volumeMounts).toContainEqual({ name: "nats-auth", mountPath: "/etc/portfolio/nats-auth", readOnly: true })
        // 288 is 0440: the pod's user reads it through fsGroup; nobody writes it.
        expect(pod.volumes).toContainEqual({
          name: "nats-auth",
          secret: { secretName, defaultMode: 288, items: [{ key: "nats-credential", path: "credential" }] }
        })
      }
      expect(invalid(objects)).toEqual([])
    }
  )

  it("mounts the CA, and a client certificate when given, for TLS", async () => {
    const caOnly = await render("--set", "nats.tls.existingSecret=nats-ca")
    expect(natsVariables(caOnly, "gateway")).toEqual(["NATS_TLS_CA_FILE"])
    expect(envOf(deployment(caOnly, "gateway"), "NATS_TLS_CA_FILE").value).toBe("/etc/portfolio/nats-tls/ca.crt")
    const mutual = await render("--set", "nats.tls.existingSecret=nats-tls", "--set", "nats.tls.certKey=tls.crt", "--set", "nats.tls.keyKey=tls.key")
    expect(natsVariables(mutual, "provisioning")).toEqual(["NATS_TLS_CA_FILE", "NATS_TLS_CERT_FILE", "NATS_TLS_KEY_FILE"])
    expect(deployment(mutual, "provisioning").spec.template.spec.volumes).toContainEqual({
      name: "nats-tls",
      secret: {
        secretName: "nats-tls",
        defaultMode: 288,
        items: [{ key: "ca.crt", path: "ca.crt" }, { key: "tls.crt", path: "tls.crt" }, { key: "tls.key", path: "tls.key" }]
      }
    })
    expect(natsVariables(mutual, "referential")).toEqual(["NATS_TLS_CA_FILE", "NATS_TLS_CERT_FILE", "NATS_TLS_KEY_FILE"])
    expect(natsVariables(mutual, "webhook-dispatcher")).toEqual(["NATS_TLS_CA_FILE", "NATS_TLS_CERT_FILE", "NATS_TLS_KEY_FILE"])
    expect(invalid(mutual)).toEqual([])
  })

  it("gives every service using NATS the streams' replicas: 1 by default, 3 on a cluster, never above one with the bundled server", async () => {
    const refusal = (...values: ReadonlyArray<string>) =>
      helmRun("template", "rel", chart, ...minimal, ...values.flatMap((value) => ["--set", value])).then(
        () => "accepted",
        (error: { stderr: string }) => error.stderr
      )
    const services = ["gateway", "provisioning", "referential", "webhook-dispatcher"]
    const single = await render()
    for (const component of services) expect(envOf(deployment(single, component), "NATS_REPLICAS")).toEqual({ name: "NATS_REPLICAS", value: "1" })
    const clustered = await render("--set", "nats.url=nats://nats-0:4222\\,nats://nats-1:4222\\,nats://nats-2:4222", "--set", "nats.replicas=3")
    for (const component of services) {
      expect(envOf(deployment(clustered, component), "NATS_REPLICAS")).toEqual({ name: "NATS_REPLICAS", value: "3" })
      expect(envOf(deployment(clustered, component), "NATS_URL").value).toBe("nats://nats-0:4222,nats://nats-1:4222,nats://nats-2:4222")
    }
    expect(envOf(deployment(clustered, "console"), "NATS_REPLICAS")).toBeUndefined()
    expect(await refusal("nats.replicas=6")).toContain("/nats/replicas")
    expect(await refusal("nats.bundled.enabled=true", "nats.replicas=3")).toContain("nats.replicas must be 1 with nats.bundled.enabled")
  })

  it("refuses an install whose NATS settings the services would refuse, naming the value", async () => {
    const refusal = (...values: ReadonlyArray<string>) =>
      helmRun("template", "rel", chart, ...minimal, ...values.flatMap((value) => ["--set", value])).then(
        () => "accepted",
        (error: { stderr: string }) => error.stderr
      )
    expect(await refusal("nats.auth.method=token", "nats.auth.gateway.value=t")).toContain("/nats/auth/provisioning")
    expect(await refusal("nats.auth.method=token", "nats.auth.gateway.value=t", "nats.auth.provisioning.value=t")).toContain("/nats/auth/referential")
    // The dispatcher needs an identity of its own while it is installed, and none once it is not.
    const threeTokens = ["nats.auth.method=token", "nats.auth.gateway.value=t", "nats.auth.provisioning.value=t", "nats.auth.referential.value=t"]
    expect(await refusal(...threeTokens)).toContain("/nats/auth/webhookDispatcher")
    expect(await refusal(...threeTokens, "webhookDispatcher.enabled=false")).toBe("accepted")
    expect(await refusal(
      "nats.auth.method=userPassword",
      "nats.auth.gateway.value=p",
      "nats.auth.provisioning.value=p",
      "nats.auth.provisioning.user=u",
      "nats.auth.referential.value=p",
      "nats.auth.referential.user=r",
      "nats.auth.webhookDispatcher.value=p",
      "nats.auth.webhookDispatcher.user=w"
    ))
      .toContain("/nats/auth/gateway/user")
    expect(await refusal("nats.auth.method=kerberos")).toContain("/nats/auth/method")
    expect(await refusal("nats.url=nats://user:password@nats:4222")).toContain("/nats/url")
    expect(await refusal("nats.tls.existingSecret=ca", "nats.tls.certKey=tls.crt")).toContain("/nats/tls/keyKey")
  })
})

describe("the internal secret's rotation and the degraded rate limit", () => {
  it("gives every service INTERNAL_SECRET_PREVIOUS only while a previous secret is named", async () => {
    const rotating = await render("--set", "internalSecret.previous.existingSecret=portfolio-internal-old")
    for (const component of ["gateway", "referential", "provisioning", "webhook-dispatcher"]) {
      expect(envOf(deployment(rotating, component), "INTERNAL_SECRET_PREVIOUS").valueFrom).toEqual({
        secretKeyRef: { name: "portfolio-internal-old", key: "internal-secret" }
      })
    }
  })

  it("sets GATEWAY_REPLICAS to gateway.replicas, or to rateLimit.degradedReplicas when set", async () => {
    expect(envOf(deployment(await render("--set", "gateway.replicas=4"), "gateway"), "GATEWAY_REPLICAS").value).toBe("4")
    const autoscaled = await render("--set", "gateway.replicas=2", "--set", "gateway.rateLimit.degradedReplicas=10")
    expect(envOf(deployment(autoscaled, "gateway"), "GATEWAY_REPLICAS").value).toBe("10")
  })
})
