import { beforeAll, describe, expect, it } from "vitest"
import { allOptions, chart, container, envOf, find, type K8sObject, minimal, selector, useHelm } from "./chartRendering.js"
import { invalid } from "./kubernetesSchemas.js"

// The webhook dispatcher: an admin port only, and the one service held on egress, since it connects
// to URLs that tenants choose (chart.test.ts covers what it shares with the other services).
const { helmRun, render } = useHelm()

const privateV4 = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16", "127.0.0.0/8", "0.0.0.0/8"]
const privateV6 = ["fc00::/7", "fe80::/10", "::1/128"]
const operators = { from: [{ podSelector: { matchLabels: { "architecture-portfolio/operator": "true" } } }], ports: [{ port: "admin", protocol: "TCP" }] }
const prometheus = {
  from: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } }, podSelector: { matchLabels: { "app.kubernetes.io/name": "prometheus" } } }],
  ports: [{ port: "admin", protocol: "TCP" }]
}
const anyPod = [{ namespaceSelector: {} }]

const dispatcher = (objects: ReadonlyArray<K8sObject>, prefix = "rel-architecture-portfolio") => ({
  deployment: find(objects, "Deployment", `${prefix}-webhook-dispatcher`),
  service: find(objects, "Service", `${prefix}-webhook-dispatcher-admin`),
  policy: find(objects, "NetworkPolicy", `${prefix}-webhook-dispatcher`)
})
/** The egress rule that lets webhooks out: the one on port 443. */
const webhookRule = (policy: K8sObject) => policy.spec.egress.find((rule: any) => rule.ports.some((p: any) => p.port === 443))
const env = (deployment: K8sObject, name: string) => envOf(deployment, name)?.value

const refusal = (...values: ReadonlyArray<string>) =>
  helmRun("template", "rel", chart, ...minimal, ...values.flatMap((value) => ["--set", value])).then(
    () => "accepted",
    (error: { stderr: string }) => error.stderr
  )

describe("the webhook dispatcher with the default values", () => {
  let objects: ReadonlyArray<K8sObject>
  beforeAll(async () => {
    objects = await render()
  })

  it("runs the same image with its own entry, listening and probed on its admin port only", () => {
    const { deployment } = dispatcher(objects)
    const main = container(deployment)
    const pod = deployment.spec.template.spec
    expect(deployment.spec.replicas).toBe(1)
    expect(deployment.spec.selector.matchLabels).toEqual(selector("webhook-dispatcher"))
    expect(main.image).toBe("architecture-portfolio:0.1.87")
    expect(main.command).toEqual(["node", "dist/webhook-dispatcher/main.mjs"])
    expect(main.ports).toEqual([{ name: "admin", containerPort: 8087, protocol: "TCP" }])
    expect(env(deployment, "ADMIN_PORT")).toBe("8087")
    expect(envOf(deployment, "PORT")).toBeUndefined()
    expect(main.livenessProbe.httpGet).toEqual({ path: "/healthz", port: "admin" })
    expect(main.readinessProbe.httpGet).toEqual({ path: "/readyz", port: "admin" })
    expect(main.startupProbe.httpGet).toEqual({ path: "/healthz", port: "admin" })
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: "RuntimeDefault" } })
    expect(main.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } })
    expect(main.resources).toEqual({ requests: { cpu: "100m", memory: "256Mi" }, limits: { memory: "512Mi" } })
    expect(pod.automountServiceAccountToken).toBe(false)
  })

  it("gives it the shared secrets, NATS and its own settings, private targets refused", () => {
    const { deployment } = dispatcher(objects)
    expect(envOf(deployment, "DATABASE_URL").valueFrom).toEqual({ secretKeyRef: { name: "rel-architecture-portfolio", key: "database-url" } })
    expect(envOf(deployment, "INTERNAL_SECRET").valueFrom).toEqual({ secretKeyRef: { name: "rel-architecture-portfolio", key: "internal-secret" } })
    expect(env(deployment, "NATS_URL")).toBe("nats://nats:4222")
    expect(env(deployment, "LOG_LEVEL")).toBe("Info")
    expect(["WEBHOOK_RETRY_SCHEDULE", "WEBHOOK_DISABLE_AFTER_FAILURES", "WEBHOOK_TIMEOUT", "WEBHOOK_CONCURRENCY"].map((name) => env(deployment, name)))
      .toEqual(["1m,5m,25m,2h,10h,50h", "10", "10s", "64"])
    expect(env(deployment, "WEBHOOK_ALLOW_PRIVATE_TARGETS")).toBe("false")
  })

  it("exposes the admin port alone, in the cluster only, and no Ingress routes to it", () => {
    const { service } = dispatcher(objects)
    expect(service.spec.type).toBe("ClusterIP")
    expect(service.spec.selector).toEqual(selector("webhook-dispatcher"))
    expect(service.spec.ports).toEqual([{ name: "admin", port: 8087, targetPort: "admin", protocol: "TCP" }])
    expect(objects.filter((o) => o.kind === "Service" && o.metadata.name.includes("webhook-dispatcher"))).toHaveLength(1)
  })

  it("admits only the console, operators and Prometheus, on the admin port", () => {
    const { policy } = dispatcher(objects)
    expect(policy.spec.podSelector.matchLabels).toEqual(selector("webhook-dispatcher"))
    expect(policy.spec.policyTypes).toEqual(["Ingress", "Egress"])
    const consolePods = { from: [{ podSelector: { matchLabels: selector("console") } }], ports: [{ port: "admin", protocol: "TCP" }] }
    expect(policy.spec.ingress).toEqual([consolePods, operators, prometheus])
  })

  it("lets it out to DNS, PostgreSQL, NATS and HTTPS on public addresses only", () => {
    const { policy } = dispatcher(objects)
    expect(policy.spec.egress).toEqual([
      {
        to: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "kube-system" } }, podSelector: { matchLabels: { "k8s-app": "kube-dns" } } }],
        ports: [{ port: 53, protocol: "UDP" }, { port: 53, protocol: "TCP" }]
      },
      { to: anyPod, ports: [{ port: 5432, protocol: "TCP" }] },
      { to: anyPod, ports: [{ port: 4222, protocol: "TCP" }] },
      {
        to: [{ ipBlock: { cidr: "0.0.0.0/0", except: privateV4 } }, { ipBlock: { cidr: "::/0", except: privateV6 } }],
        ports: [{ port: 443, protocol: "TCP" }]
      }
    ])
    // No rule reaches an address block whole: every ipBlock leaves the private ranges out.
    const blocks = policy.spec.egress.flatMap((rule: any) => rule.to).filter((peer: any) => peer.ipBlock !== undefined)
    expect(blocks.every((peer: any) => peer.ipBlock.except?.length > 0)).toBe(true)
  })
})

describe("the webhook dispatcher's options", () => {
  it("passes its settings from every option, and the egress peers given", async () => {
    const objects = await render("-f", allOptions)
    const { deployment, policy, service } = dispatcher(objects, "ap")
    expect(deployment.spec.replicas).toBe(2)
    expect(["WEBHOOK_RETRY_SCHEDULE", "WEBHOOK_DISABLE_AFTER_FAILURES", "WEBHOOK_TIMEOUT", "WEBHOOK_ALLOW_PRIVATE_TARGETS", "WEBHOOK_CONCURRENCY"].map((name) => env(deployment, name)))
      .toEqual(["30s,2m,10m,1h", "5", "5s", "true", "16"])
    expect(envOf(deployment, "NATS_PASSWORD").valueFrom).toEqual({ secretKeyRef: { name: "portfolio-nats-webhook-dispatcher", key: "password" } })
    expect(env(deployment, "NATS_USER")).toBe("portfolio-webhook-dispatcher")
    expect(envOf(deployment, "INTERNAL_SECRET_PREVIOUS").valueFrom).toEqual({ secretKeyRef: { name: "portfolio-internal-previous", key: "secret" } })
    expect(service.spec.type).toBe("ClusterIP")
    expect(policy.spec.egress.slice(0, 3)).toEqual([
      { to: [{ ipBlock: { cidr: "169.254.20.10/32" } }], ports: [{ port: 53, protocol: "UDP" }, { port: 53, protocol: "TCP" }] },
      { to: [{ ipBlock: { cidr: "10.1.0.0/24" } }], ports: [{ port: 5432, protocol: "TCP" }, { port: 6432, protocol: "TCP" }] },
      {
        to: [{
          namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "messaging" } },
          podSelector: { matchLabels: { "app.kubernetes.io/name": "nats" } }
        }],
        ports: [{ port: 4222, protocol: "TCP" }]
      }
    ])
    // The application allows private targets here, the network still does not, except the ranges listed.
    expect(webhookRule(policy)).toEqual({
      to: [
        { ipBlock: { cidr: "0.0.0.0/0", except: privateV4 } },
        { ipBlock: { cidr: "::/0", except: privateV6 } },
        { ipBlock: { cidr: "10.20.0.0/16" } },
        { ipBlock: { cidr: "fd12:3456::/48" } }
      ],
      ports: [{ port: 443, protocol: "TCP" }, { port: 8443, protocol: "TCP" }]
    })
    expect(invalid(objects)).toEqual([])
  })

  it("never routes the Ingress to the dispatcher", async () => {
    const objects = await render("-f", allOptions)
    const backends = find(objects, "Ingress", "ap").spec.rules.flatMap((rule: any) => rule.http.paths.map((path: any) => path.backend.service.name))
    expect(backends).toEqual(["ap-gateway", "ap-provisioning", "ap-console"])
  })

  it("opens the private ranges only when egress.allowPrivateTargets says so", async () => {
    const appOnly = await render("--set", "webhookDispatcher.allowPrivateTargets=true")
    expect(env(dispatcher(appOnly).deployment, "WEBHOOK_ALLOW_PRIVATE_TARGETS")).toBe("true")
    expect(webhookRule(dispatcher(appOnly).policy).to[0].ipBlock.except).toEqual(privateV4)
    const open = await render("--set", "webhookDispatcher.allowPrivateTargets=true", "--set", "webhookDispatcher.egress.allowPrivateTargets=true")
    expect(webhookRule(dispatcher(open).policy).to).toEqual([{ ipBlock: { cidr: "0.0.0.0/0" } }, { ipBlock: { cidr: "::/0" } }])
    expect(invalid(open)).toEqual([])
  })

  it("lets it reach the OTLP collector only when telemetry is exported", async () => {
    const traced = await render("--set", "telemetry.otlpEndpoint=http://otel-collector.observability:4318")
    expect(env(dispatcher(traced).deployment, "OTEL_EXPORTER_OTLP_ENDPOINT")).toBe("http://otel-collector.observability:4318")
    expect(dispatcher(traced).policy.spec.egress).toContainEqual({ to: anyPod, ports: [{ port: 4318, protocol: "TCP" }] })
    expect(dispatcher(await render()).policy.spec.egress).toHaveLength(4)
  })

  it("renders nothing of it when disabled, NATS credential included", async () => {
    const objects = await render(
      "--set", "webhookDispatcher.enabled=false",
      "--set", "nats.auth.method=token",
      ...["gateway", "provisioning", "referential", "webhookDispatcher"].flatMap((key) => ["--set", `nats.auth.${key}.value=t`])
    )
    expect(objects.filter((o) => o.metadata.name.includes("webhook-dispatcher"))).toEqual([])
    expect(Object.keys(find(objects, "Secret", "rel-architecture-portfolio").data)).not.toContain("nats-webhook-dispatcher-credential")
  })

  it("refuses values the dispatcher would refuse, naming the value", async () => {
    expect(await refusal("webhookDispatcher.timeout=10 seconds")).toContain("/webhookDispatcher/timeout")
    expect(await refusal("webhookDispatcher.retrySchedule=1m;5m")).toContain("/webhookDispatcher/retrySchedule")
    expect(await refusal("webhookDispatcher.disableAfterFailures=0")).toContain("/webhookDispatcher/disableAfterFailures")
    expect(await refusal("webhookDispatcher.concurrency=0")).toContain("/webhookDispatcher/concurrency")
    expect(await refusal("webhookDispatcher.allowPrivateTargets=yes")).toContain("/webhookDispatcher/allowPrivateTargets")
    expect(await refusal("webhookDispatcher.egress.extraAllowedCidrs[0]=10.0.0.1")).toContain("/webhookDispatcher/egress/extraAllowedCidrs/0")
    expect(await refusal("webhookDispatcher.egress.extraPorts[0]=443")).toContain("/webhookDispatcher/egress/extraPorts/0")
    expect(await refusal("webhookDispatcher.egress.nats.to[0].ipblock.cidr=10.0.0.0/8")).toContain("/webhookDispatcher/egress/nats/to/0")
    expect(await refusal("webhookDispatcher.listenPort=9000")).toContain("listenPort")
  })
})
