import { createHash } from "node:crypto"
import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { parse, parseAllDocuments } from "yaml"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ConfigProvider, Effect, Result } from "effect"
import { logLevelConfig } from "@portfolio/platform/http"
import { Retention, RetentionDefaults } from "@portfolio/platform/sql"
import { allOptions, chart, container, envOf, find, type K8sObject, kubeVersion, minimal, selector, useHelm } from "./chartRendering.js"
import { type FakeKubernetes, ownedBy, startFakeKubernetes } from "./fakeKubernetes.js"
import { invalid } from "./kubernetesSchemas.js"

// What a platform team relies on across upgrades and in a monitored cluster: secrets kept and pods
// rolled when they change, autoscaling and disruption budgets, the ServiceMonitor and dashboard,
// the NATS of a trial (installed beside the chart, never by it), and room for their own placement and settings.
const { helmRun, render } = useHelm()

const prefix = "rel-architecture-portfolio"
const services = ["gateway", "referential", "provisioning", "webhook-dispatcher", "console"] as const
/** The services with a NATS identity: the console uses no NATS. */
const natsServices = services.filter((component) => component !== "console")
const deployments = (objects: ReadonlyArray<K8sObject>) => objects.filter((o) => o.kind === "Deployment")
const checksums = (objects: ReadonlyArray<K8sObject>) =>
  Object.fromEntries(deployments(objects).map((d) => [d.metadata.name, d.spec.template.metadata.annotations?.["checksum/secret"]]))
const decoded = (secret: K8sObject, key: string) => Buffer.from(secret.data[key], "base64").toString()
/** sha256 of the Secret's data as Helm's toJson writes it (keys sorted, no spaces). */
const checksumOf = (data: Record<string, string>) =>
  createHash("sha256").update(JSON.stringify(Object.fromEntries(Object.entries(data).sort(([a], [b]) => a.localeCompare(b))))).digest("hex")

const refusal = (...values: ReadonlyArray<string>) =>
  helmRun("template", "rel", chart, "--kube-version", kubeVersion, ...minimal, ...values.flatMap((value) => ["--set", value])).then(
    () => "accepted",
    (error: { stderr: string }) => error.stderr
  )

/** `helm template` against the fake API server, as `helm upgrade` renders: lookup and discovery answer. */
const renderOn = async (cluster: FakeKubernetes, ...extra: ReadonlyArray<string>) => {
  const { stdout } = await helmRun(
    "template", "rel", chart, "--namespace", "portfolio", "--kubeconfig", cluster.kubeconfig, "--dry-run=server",
    // The fake server has no OpenAPI document; kubernetesSchemas.ts checks the objects instead.
    "--disable-openapi-validation", ...minimal, ...extra
  )
  return parseAllDocuments(stdout).map((document) => document.toJS() as K8sObject | null).filter((o) => o !== null)
}

/** Where a trial's NATS answers: the upstream chart installed as release `nats` in the namespace with nats-values.yaml. */
const trialNatsUrl = "nats://nats.portfolio.svc:4222"

/** Sets of options a platform team combines, each linted strictly and rendered into valid objects. */
const matrix: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["a trial cluster: the upstream NATS chart beside it, local mail, first tenant, admintools", [
    "--set", `nats.url=${trialNatsUrl}`, "--set", "provisioning.mailTransport=local", "--set", "firstTenant.slug=trial",
    "--set", "firstTenant.adminEmail=admin@trial.example", "--set", "admintools.enabled=true"
  ]],
  ["a trial cluster with the chart's own NATS, local mail, first tenant", [
    "--set", "nats.bundled.enabled=true", "--set", "provisioning.mailTransport=local", "--set", "firstTenant.slug=trial",
    "--set", "firstTenant.adminEmail=admin@trial.example"
  ]],
  ["each service migrating itself, no NetworkPolicy, no helm test", [
    "--set", "migrations.enabled=false", "--set", "networkPolicy.enabled=false", "--set", "tests.enabled=false"
  ]],
  ["NATS by .creds files over mutual TLS, every service autoscaled or replicated", [
    "--set", "nats.auth.method=creds", "--set", "nats.tls.existingSecret=nats-tls", "--set", "nats.tls.certKey=tls.crt", "--set", "nats.tls.keyKey=tls.key",
    ...natsServices.flatMap((s) => ["--set", `nats.auth.${s === "webhook-dispatcher" ? "webhookDispatcher" : s}.existingSecret=nats-${s}`]),
    "--set", "gateway.autoscaling.enabled=true", "--set", "referential.autoscaling.enabled=true", "--set", "provisioning.autoscaling.enabled=true",
    "--set", "console.autoscaling.enabled=true", "--set", "webhookDispatcher.replicas=2"
  ]],
  ["monitoring forced for a GitOps render, the dashboard, an existing ServiceAccount, no dispatcher", [
    "--set", "metrics.serviceMonitor.force=true", "--set", "grafana.dashboards.enabled=true", "--set", "serviceAccount.create=false",
    "--set", "serviceAccount.name=portfolio", "--set", "webhookDispatcher.enabled=false", "--set", "internalSecret.existingSecret=portfolio-internal"
  ]],
  ["every option without the console, behind an Ingress", ["-f", allOptions, "--set", "console.enabled=false"]],
  ["every option, on the oldest Kubernetes the chart supports", ["-f", allOptions, "--kube-version", "1.25.0"]]
]

describe("a matrix of options", () => {
  it.each(matrix)("%s: lints strictly and renders objects the Kubernetes API accepts", async (_name, options) => {
    const lint = await helmRun("lint", "--strict", chart, "--kube-version", kubeVersion, ...minimal, ...options)
    expect(lint.stdout).toContain("1 chart(s) linted, 0 chart(s) failed")
    const objects = await render(...options)
    expect(objects.filter((o) => o.kind === "Deployment").length).toBeGreaterThanOrEqual(3)
    expect(invalid(objects)).toEqual([])
  })
})

describe("secrets across upgrades", () => {
  const kept = "K".repeat(48)
  const keptSigningKeys = JSON.stringify([{ kid: "chart-kept", pem: "-----BEGIN EC PRIVATE KEY-----\nkept\n-----END EC PRIVATE KEY-----\n" }])
  let cluster: FakeKubernetes
  let empty: FakeKubernetes
  beforeAll(async () => {
    // The Secret a previous install left, with the internal secret it generated then.
    cluster = await startFakeKubernetes({
      objects: [ownedBy("rel", {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: prefix, namespace: "portfolio" },
        data: {
          "internal-secret": Buffer.from(kept).toString("base64"),
          "oauth-signing-keys": Buffer.from(keptSigningKeys).toString("base64"),
          "database-url": Buffer.from("postgres://old@db/portfolio").toString("base64")
        }
      })]
    })
    empty = await startFakeKubernetes()
  })
  afterAll(async () => {
    await cluster?.close()
    await empty?.close()
  })

  it("keeps the INTERNAL_SECRET and OAUTH_SIGNING_KEYS a previous install generated (lookup), in the Secret, the Job's copy and the pods' checksum", async () => {
    const first = await renderOn(cluster)
    const second = await renderOn(cluster)
    expect(cluster.requests).toContain(`/api/v1/namespaces/portfolio/secrets/${prefix}`)
    for (const objects of [first, second]) {
      expect(decoded(find(objects, "Secret", prefix), "internal-secret")).toBe(kept)
      expect(decoded(find(objects, "Secret", prefix), "oauth-signing-keys")).toBe(keptSigningKeys)
      expect(find(objects, "Secret", `${prefix}-migrations`).data).toEqual(find(objects, "Secret", prefix).data)
      // Only the generated value is read back: the database URL is the values' own.
      expect(decoded(find(objects, "Secret", prefix), "database-url")).toBe("postgres://portfolio@postgresql:5432/portfolio")
    }
    expect(checksums(second)).toEqual(checksums(first))
    expect(new Set(Object.values(checksums(first)))).toEqual(new Set([checksumOf(find(first, "Secret", prefix).data)]))
  })

  it("draws a new one on a first install, the same in the Secret and its copy", async () => {
    const objects = await renderOn(empty)
    const drawn = decoded(find(objects, "Secret", prefix), "internal-secret")
    expect(drawn).toMatch(/^[A-Za-z0-9]{48}$/)
    expect(decoded(find(objects, "Secret", `${prefix}-migrations`), "internal-secret")).toBe(drawn)
  })

  it("keeps every object's name from one render to the next, and every checksum when nothing is generated", async () => {
    const names = (objects: ReadonlyArray<K8sObject>) => objects.map((o) => `${o.kind}/${o.metadata.name}`).sort()
    expect(names(await render())).toEqual(names(await render()))
    expect(names(await render("-f", allOptions))).toEqual(names(await render("-f", allOptions)))
    const existing = ["--set", "internalSecret.existingSecret=portfolio-internal", "--set", "oauthSigningKeys.existingSecret=portfolio-oauth"]
    const first = await render(...existing)
    const second = await render(...existing)
    expect(checksums(first)).toEqual(checksums(second))
    expect(Object.values(checksums(first)).every((sum) => /^[0-9a-f]{64}$/.test(sum))).toBe(true)
  })

  it("rolls the pods when the Secret they read changes, and carries no checksum when the chart keeps no Secret", async () => {
    const existing = ["--set", "internalSecret.existingSecret=portfolio-internal", "--set", "oauthSigningKeys.existingSecret=portfolio-oauth"]
    const before = checksums(await render(...existing))
    const after = checksums(await render(...existing, "--set", "database.url=postgres://portfolio@db.internal:5432/portfolio"))
    for (const component of services) expect(after[`${prefix}-${component}`]).not.toBe(before[`${prefix}-${component}`])
    expect(Object.values(checksums(await render("-f", allOptions)))).toEqual([undefined, undefined, undefined, undefined, undefined, undefined])
  })
})

describe("autoscaling and disruption budgets", () => {
  it("gives the gateway an HPA that owns its replicas, and the degraded rate limit the autoscaler's maximum", async () => {
    const objects = await render("--set", "gateway.autoscaling.enabled=true", "--set", "gateway.autoscaling.maxReplicas=8")
    const hpa = find(objects, "HorizontalPodAutoscaler", `${prefix}-gateway`)
    expect(hpa.spec).toEqual({
      scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: `${prefix}-gateway` },
      minReplicas: 2,
      maxReplicas: 8,
      metrics: [{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 70 } } }]
    })
    const gateway = find(objects, "Deployment", `${prefix}-gateway`)
    expect(gateway.spec.replicas).toBeUndefined()
    expect(envOf(gateway, "GATEWAY_REPLICAS").value).toBe("8")
    expect(find(objects, "PodDisruptionBudget", `${prefix}-gateway`).spec.minAvailable).toBe(1)
    expect(invalid(objects)).toEqual([])
  })

  it("scales the stateless services on CPU and memory as asked, never the webhook dispatcher", async () => {
    const objects = await render("-f", allOptions)
    expect(objects.filter((o) => o.kind === "HorizontalPodAutoscaler").map((o) => o.metadata.name).sort()).toEqual(["ap-console", "ap-gateway", "ap-provisioning"])
    expect(find(objects, "HorizontalPodAutoscaler", "ap-provisioning").spec.metrics).toEqual([
      { type: "Resource", resource: { name: "memory", target: { type: "Utilization", averageUtilization: 75 } } }
    ])
    expect(find(objects, "HorizontalPodAutoscaler", "ap-console").spec).toMatchObject({ minReplicas: 2, maxReplicas: 3 })
    expect(find(objects, "Deployment", "ap-console").spec.replicas).toBeUndefined()
    // Without the console, no autoscaler of it either.
    expect((await render("-f", allOptions, "--set", "console.enabled=false")).filter((o) => o.kind === "HorizontalPodAutoscaler").map((o) => o.metadata.name).sort())
      .toEqual(["ap-gateway", "ap-provisioning"])
    expect(find(objects, "Deployment", "ap-referential").spec.replicas).toBe(2)
    expect(await refusal("gateway.autoscaling.enabled=true", "gateway.autoscaling.targetCPUUtilizationPercentage=0")).toContain("/gateway/autoscaling")
    expect(await refusal("webhookDispatcher.autoscaling.enabled=true")).toContain("autoscaling")
  })

  it("budgets every service that runs more than one pod, and none that runs one (it would block every drain)", async () => {
    const defaults = await render()
    expect(defaults.filter((o) => o.kind === "PodDisruptionBudget").map((o) => o.metadata.name)).toEqual([`${prefix}-gateway`])
    const scaled = await render(...services.flatMap((s) => ["--set", `${s === "webhook-dispatcher" ? "webhookDispatcher" : s}.replicas=3`]))
    expect(scaled.filter((o) => o.kind === "PodDisruptionBudget").map((o) => o.metadata.name).sort()).toEqual(services.map((s) => `${prefix}-${s}`).sort())
    for (const component of services) {
      expect(find(scaled, "PodDisruptionBudget", `${prefix}-${component}`).spec.selector.matchLabels).toEqual(selector(component))
    }
    const every = await render("-f", allOptions)
    expect(every.filter((o) => o.kind === "PodDisruptionBudget").map((o) => [o.metadata.name, o.spec.minAvailable])).toEqual([
      ["ap-gateway", 2], ["ap-referential", 1], ["ap-provisioning", "50%"], ["ap-console", 1]
    ])
    // Before 1.27 the API has no unhealthyPodEvictionPolicy.
    const old = await render("--kube-version", "1.26.0")
    expect(find(old, "PodDisruptionBudget", `${prefix}-gateway`).spec.unhealthyPodEvictionPolicy).toBeUndefined()
  })
})

describe("monitoring", () => {
  it("creates a ServiceMonitor when the cluster serves the Prometheus Operator's API, or when forced, never when disabled", async () => {
    expect((await render()).filter((o) => o.kind === "ServiceMonitor")).toEqual([])
    expect((await render("--api-versions", "monitoring.coreos.com/v1")).filter((o) => o.kind === "ServiceMonitor")).toHaveLength(1)
    expect((await render("--set", "metrics.serviceMonitor.force=true")).filter((o) => o.kind === "ServiceMonitor")).toHaveLength(1)
    expect((await render("--api-versions", "monitoring.coreos.com/v1", "--set", "metrics.serviceMonitor.enabled=false")).filter((o) => o.kind === "ServiceMonitor")).toEqual([])
    // Discovered as helm upgrade discovers it, from the API server.
    const withOperator = await startFakeKubernetes({ prometheusOperator: true })
    try {
      expect((await renderOn(withOperator)).filter((o) => o.kind === "ServiceMonitor")).toHaveLength(1)
    } finally {
      await withOperator.close()
    }
  })

  it("scrapes /metrics on the admin Services only, one job per service", async () => {
    const objects = await render("-f", allOptions)
    const monitor = find(objects, "ServiceMonitor", "ap")
    expect(monitor.metadata.labels?.["release"]).toBe("kube-prometheus-stack")
    expect(monitor.spec).toEqual({
      jobLabel: "app.kubernetes.io/component",
      namespaceSelector: { matchNames: ["portfolio"] },
      selector: { matchLabels: { "app.kubernetes.io/name": "portfolio", "app.kubernetes.io/instance": "rel", "architecture-portfolio/admin": "true" } },
      endpoints: [{
        port: "admin",
        path: "/metrics",
        interval: "15s",
        scrapeTimeout: "5s",
        relabelings: [{ action: "replace", targetLabel: "cluster", replacement: "production" }],
        metricRelabelings: [{ action: "drop", sourceLabels: ["__name__"], regex: "nodejs_.*" }]
      }]
    })
    const matched = objects.filter((o) =>
      o.kind === "Service" && Object.entries(monitor.spec.selector.matchLabels).every(([key, value]) => o.metadata.labels?.[key] === value))
    expect(matched.map((s) => s.metadata.name).sort()).toEqual(["ap-console-admin", "ap-gateway-admin", "ap-provisioning-admin", "ap-referential-admin", "ap-webhook-dispatcher-admin"])
    expect(matched.every((s) => s.spec.ports.some((p: any) => p.name === "admin"))).toBe(true)
    expect(invalid([monitor])).toEqual([])
  })

  it("ships the Grafana dashboard for the sidecar, the same file as deploy/grafana", async () => {
    expect((await render()).filter((o) => o.kind === "ConfigMap")).toEqual([])
    const dashboard = find(await render("-f", allOptions), "ConfigMap", "ap-dashboard")
    expect(dashboard.metadata.namespace).toBe("observability")
    expect(dashboard.metadata.labels).toMatchObject({ grafana_dashboard: "1", "team.example.com/dashboards": "yes" })
    expect(dashboard.metadata.annotations).toEqual({ grafana_folder: "Portfolio" })
    const chartCopy = readFileSync(fileURLToPath(new URL("../../charts/architecture-portfolio/dashboards/portfolio.json", import.meta.url)), "utf8")
    expect(dashboard.data["portfolio.json"]).toBe(chartCopy)
    JSON.parse(chartCopy)
    // Helm reads no file outside the chart: the chart keeps a copy, which must not drift.
    expect(chartCopy).toBe(readFileSync(fileURLToPath(new URL("../../deploy/grafana/portfolio.json", import.meta.url)), "utf8"))
  })
})

describe("NATS for a trial: one server of the chart's own, or the upstream chart beside it", () => {
  it("bundles no chart: Chart.yaml has no dependencies and there is no charts/ folder", () => {
    const chartYaml = parse(readFileSync(`${chart}/Chart.yaml`, "utf8")) as Record<string, unknown>
    expect(chartYaml["name"]).toBe("architecture-portfolio")
    expect(chartYaml).not.toHaveProperty("dependencies")
    expect(existsSync(`${chart}/charts`)).toBe(false)
    expect(existsSync(`${chart}/Chart.lock`)).toBe(false)
  })

  it("keeps nats-values.yaml for the upstream chart: JetStream on file storage, synced at every write", () => {
    const values = parse(readFileSync(`${chart}/nats-values.yaml`, "utf8")) as any
    const jetstream = values.config.jetstream
    expect(jetstream.enabled).toBe(true)
    expect(jetstream.fileStore.enabled).toBe(true)
    expect(jetstream.fileStore.pvc.enabled).toBe(true)
    expect(jetstream.fileStore.pvc.size).toMatch(/^[0-9]+(Mi|Gi|Ti)$/)
    // In the jetstream block of nats.conf: JetStream's default is an fsync every two minutes.
    expect(jetstream.merge).toEqual({ sync_interval: "always" })
  })

  it("installs no NATS, by default or when nats.url points at the trial's server, and hands the services nats.url", async () => {
    const defaults = await render()
    const trial = await render("--set", `nats.url=${trialNatsUrl}`)
    for (const [objects, url] of [[defaults, "nats://nats:4222"], [trial, trialNatsUrl]] as const) {
      expect(new Set(objects.map((o) => o.kind))).not.toContain("StatefulSet")
      expect(objects.filter((o) => /(^|-)nats(-|$)/.test(o.metadata.name))).toEqual([])
      for (const component of natsServices) {
        expect(envOf(find(objects, "Deployment", `${prefix}-${component}`), "NATS_URL").value).toBe(url)
        const job = find(objects, "Job", `${prefix}-migrations`).spec.template.spec.containers.find((c: any) => c.name === component)
        expect(job.env.find((e: any) => e.name === "NATS_URL").value).toBe(url)
      }
      expect(envOf(find(objects, "Deployment", `${prefix}-console`), "NATS_URL")).toBeUndefined()
    }
  })
})

describe("the bundled NATS (nats.bundled.enabled)", () => {
  let objects: ReadonlyArray<K8sObject>
  beforeAll(async () => {
    objects = await render("--set", "nats.bundled.enabled=true", "--set", "nats.bundled.storage.size=2Gi", "--set", "nats.bundled.storage.storageClassName=fast")
  })
  const name = `${prefix}-nats`

  it("runs one JetStream server on a claim of its own, every write synced before it is acknowledged", () => {
    const config: string = find(objects, "ConfigMap", name).data["nats.conf"]
    expect(config).toMatch(/jetstream \{[^}]*store_dir: \/data[^}]*sync_interval: always[^}]*\}/s)
    expect(config).toContain("port: 4222")
    const set = find(objects, "StatefulSet", name)
    expect(set.spec.replicas).toBe(1)
    const pod = set.spec.template.spec
    const main = pod.containers[0]
    expect(main.image).toBe("nats:2.11-alpine")
    expect(main.command).toEqual(["nats-server", "--config", "/etc/nats/nats.conf"])
    expect(main.readinessProbe.httpGet).toEqual({ path: "/healthz?js-enabled-only=true", port: "monitor" })
    expect(main.volumeMounts).toEqual([{ name: "config", mountPath: "/etc/nats", readOnly: true }, { name: "data", mountPath: "/data" }])
    expect(main.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false })
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, fsGroup: 1000 })
    expect(set.spec.volumeClaimTemplates[0].spec).toEqual({ accessModes: ["ReadWriteOnce"], storageClassName: "fast", resources: { requests: { storage: "2Gi" } } })
    // A changed configuration restarts it.
    expect(set.spec.template.metadata.annotations["checksum/config"]).toMatch(/^[0-9a-f]{64}$/)
    expect(find(objects, "Service", name).spec.ports).toEqual([{ name: "client", port: 4222, targetPort: "client", protocol: "TCP" }])
    expect(invalid(objects)).toEqual([])
  })

  it("is the NATS of every service and of their migrations, whatever nats.url says", async () => {
    for (const component of natsServices) {
      expect(envOf(find(objects, "Deployment", `${prefix}-${component}`), "NATS_URL").value).toBe(`nats://${name}:4222`)
      const job = find(objects, "Job", `${prefix}-migrations`).spec.template.spec.containers.find((c: any) => c.name === component)
      expect(job.env.find((e: any) => e.name === "NATS_URL").value).toBe(`nats://${name}:4222`)
    }
    const told = await render("--set", "nats.bundled.enabled=true", "--set", "nats.url=nats://elsewhere:4222")
    expect(envOf(find(told, "Deployment", `${prefix}-gateway`), "NATS_URL").value).toBe(`nats://${name}:4222`)
  })

  it("admits only the services that use NATS, on the client port", () => {
    const policy = find(objects, "NetworkPolicy", name)
    expect(policy.spec.podSelector.matchLabels).toEqual(selector("nats"))
    expect(policy.spec.ingress).toEqual([{
      from: natsServices.map((component) => ({ podSelector: { matchLabels: selector(component) } })),
      ports: [{ port: "client", protocol: "TCP" }]
    }])
    expect(policy.spec.egress).toEqual([])
  })

  it("takes the chart-wide placement and pull secrets, as every pod of the chart", async () => {
    const placed = await render("--set", "nats.bundled.enabled=true", "--set", "nodeSelector.pool=trial", "--set", "tolerations[0].key=dedicated",
      "--set", "tolerations[0].operator=Exists", "--set", "imagePullSecrets[0].name=registry")
    const pod = find(placed, "StatefulSet", name).spec.template.spec
    expect(pod.nodeSelector).toEqual({ pool: "trial" })
    expect(pod.tolerations).toEqual([{ key: "dedicated", operator: "Exists" }])
    expect(pod.imagePullSecrets).toEqual([{ name: "registry" }])
    expect(pod.automountServiceAccountToken).toBe(false)
    expect(invalid(placed)).toEqual([])
  })

  it("refuses accounts and TLS it does not have, naming the values", async () => {
    const tokens = ["gateway", "provisioning", "referential", "webhookDispatcher"].flatMap((service) => ["--set", `nats.auth.${service}.value=token-of-${service}`])
    const refused = await helmRun("template", "rel", chart, "--kube-version", kubeVersion, ...minimal, "--set", "nats.bundled.enabled=true", "--set", "nats.auth.method=token", ...tokens).then(
      () => "accepted",
      (error: { stderr: string }) => error.stderr
    )
    expect(refused).toContain("nats.bundled.enabled runs a NATS without accounts")
    const tls = await helmRun("template", "rel", chart, "--kube-version", kubeVersion, ...minimal, "--set", "nats.bundled.enabled=true", "--set", "nats.tls.existingSecret=nats-ca").then(
      () => "accepted",
      (error: { stderr: string }) => error.stderr
    )
    expect(tls).toContain("nats.bundled.enabled runs a NATS without TLS")
  })
})

describe("room to live in", () => {
  let objects: ReadonlyArray<K8sObject>
  beforeAll(async () => {
    objects = await render("-f", allOptions)
  })

  it("places each service's pods by its own values, or the chart-wide ones", () => {
    for (const component of services) {
      const pod = find(objects, "Deployment", `ap-${component}`).spec.template.spec
      expect(pod.nodeSelector).toEqual({ "node.example.com/pool": component })
      expect(pod.tolerations).toEqual([{ key: "dedicated", operator: "Equal", value: component, effect: "NoSchedule" }])
      expect(pod.priorityClassName).toBe(`portfolio-${component}`)
      expect(pod.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.labelSelector.matchLabels).toEqual({
        "app.kubernetes.io/component": component
      })
      // A constraint without a labelSelector spreads the service's own pods.
      expect(pod.topologySpreadConstraints).toEqual([{
        maxSkew: 1,
        topologyKey: "topology.kubernetes.io/zone",
        whenUnsatisfiable: "ScheduleAnyway",
        labelSelector: { matchLabels: selector(component, "portfolio") }
      }])
      expect(pod.serviceAccountName).toBe("portfolio")
      expect(pod.securityContext.runAsUser).toBe(10001)
    }
    const job = find(objects, "Job", "ap-migrations").spec.template.spec
    expect(job.nodeSelector).toEqual({ "kubernetes.io/os": "linux" })
    expect(job.priorityClassName).toBe("portfolio")
    expect(job.topologySpreadConstraints[0].labelSelector).toEqual({ matchLabels: { "team.example.com/product": "portfolio" } })
    expect(find(objects, "ServiceAccount", "portfolio").metadata.annotations).toEqual({ "eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/portfolio" })
  })

  it("adds the chart-wide and the service's own labels, annotations, environment and volumes, the chart's labels winning", async () => {
    for (const component of services) {
      const deployment = find(objects, "Deployment", `ap-${component}`)
      const template = deployment.spec.template
      expect(template.metadata.labels).toMatchObject({ ...selector(component, "portfolio"), "team.example.com/product": "portfolio", "team.example.com/service": component })
      const main = container(deployment)
      const extra = `${component.toUpperCase().replace("-", "_")}_EXTRA`
      expect(main.env.slice(-2)).toEqual([
        { name: "NODE_OPTIONS", value: "--enable-source-maps --max-semi-space-size=4 --max-old-space-size=256" },
        { name: extra, value: "yes" }
      ])
      expect(main.envFrom).toEqual([{ secretRef: { name: "portfolio-extra", optional: true } }, { configMapRef: { name: `${component}-settings` } }])
      expect(main.volumeMounts.slice(-2)).toEqual([
        { name: "corporate-ca", mountPath: "/etc/ssl/corporate", readOnly: true },
        { name: `${component}-ca`, mountPath: `/etc/${component}-ca`, readOnly: true }
      ])
      expect(template.spec.volumes.map((v: any) => v.name)).toEqual(expect.arrayContaining(["tmp", "corporate-ca", `${component}-ca`]))
    }
    const hijack = await render("--set", "podLabels.app\\.kubernetes\\.io/component=other", "--set", "gateway.podLabels.app\\.kubernetes\\.io/instance=other")
    expect(find(hijack, "Deployment", `${prefix}-gateway`).spec.template.metadata.labels).toMatchObject(selector("gateway"))
  })

  it("gives a service its own ServiceAccount and pull secrets when asked, the others the chart-wide ones", async () => {
    const own = await render(
      "--set", "imagePullSecrets[0].name=registry",
      "--set", "gateway.serviceAccountName=gateway-identity",
      "--set", "webhookDispatcher.imagePullSecrets[0].name=hooks-registry"
    )
    const pod = (component: string) => find(own, "Deployment", `${prefix}-${component}`).spec.template.spec
    expect(pod("gateway").serviceAccountName).toBe("gateway-identity")
    expect(pod("referential").serviceAccountName).toBe(prefix)
    expect(pod("webhook-dispatcher").imagePullSecrets).toEqual([{ name: "hooks-registry" }])
    expect(pod("gateway").imagePullSecrets).toEqual([{ name: "registry" }])
    // The migration Job runs every service's migration in one pod, under the chart-wide account.
    expect(find(own, "Job", `${prefix}-migrations`).spec.template.spec.imagePullSecrets).toEqual([{ name: "registry" }])
    expect(invalid(own)).toEqual([])
  })

  it("pulls the image by digest when one is given", () => {
    expect(container(find(objects, "Deployment", "ap-gateway")).image).toBe(`registry.example.com/architecture-portfolio:1.2.3@sha256:${"0123456789abcdef".repeat(4)}`)
    expect(find(objects, "Job", "ap-migrations").spec.template.spec.containers.every((c: any) => c.image.includes("@sha256:"))).toBe(true)
  })

  it("accepts every object rendered with all of it", () => {
    expect(invalid(objects)).toEqual([])
  })

  it("refuses what Kubernetes would refuse, naming the value", async () => {
    expect(await refusal("image.digest=latest")).toContain("/image/digest")
    expect(await refusal("gateway.extraEnv[0].value=x")).toContain("/gateway/extraEnv/0")
    expect(await refusal("tolerations[0].operator=Sometimes")).toContain("/tolerations/0/operator")
    expect(await refusal("referential.topologySpreadConstraints[0].maxSkew=1")).toContain("/referential/topologySpreadConstraints/0")
    expect(await refusal("provisioning.podDisruptionBudget.minAvailable=half")).toContain("/provisioning/podDisruptionBudget/minAvailable")
    expect(await refusal("affinity.nodeAffinty.x=y")).toContain("/affinity")
    expect(await refusal("migrations.waitTimeout=60s")).toContain("/migrations/waitTimeout")
    expect(await refusal("serviceAccount.name=Not_A_Name")).toContain("/serviceAccount/name")
    // What the console would refuse at start.
    expect(await refusal("console.signIn.maxFailures=0")).toContain("/console/signIn/maxFailures")
    expect(await refusal("console.session.idleMinutes=0")).toContain("/console/session/idleMinutes")
    expect(await refusal("console.trustedProxyHops=-1")).toContain("/console/trustedProxyHops")
    expect(await refusal("console.egress.database.ports[0]=0")).toContain("/console/egress/database/ports/0")
  })
})

describe("log levels", () => {
  it("gives each service its own LOG_LEVEL when set, the chart-wide one otherwise, in its pods and in its migration", async () => {
    const objects = await render("--set", "log.level=WARN", "--set", "webhookDispatcher.logLevel=Debug", "--set", "gateway.logLevel=None")
    const levels = Object.fromEntries(services.map((component) => [component, envOf(find(objects, "Deployment", `${prefix}-${component}`), "LOG_LEVEL").value]))
    expect(levels).toEqual({ gateway: "None", referential: "WARN", provisioning: "WARN", "webhook-dispatcher": "Debug", console: "WARN" })
    const migrations = find(objects, "Job", `${prefix}-migrations`).spec.template.spec.containers
    expect(Object.fromEntries(migrations.map((c: any) => [c.name, c.env.find((e: any) => e.name === "LOG_LEVEL").value]))).toEqual(levels)
  })

  it("offers only levels the services read: every one of the schema's starts a service's logging", () => {
    const schema = JSON.parse(readFileSync(`${chart}/values.schema.json`, "utf8"))
    const offered: ReadonlyArray<string> = schema.definitions.logLevel.enum
    expect(offered).toEqual(expect.arrayContaining(["Info", "Warning", "WARN", "None", "OFF"]))
    const read = (value: string) =>
      Effect.runSync(Effect.result(Effect.provideService(logLevelConfig("LOG_LEVEL"), ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord({ LOG_LEVEL: value }))))
    expect(offered.filter((value) => Result.isFailure(read(value)))).toEqual([])
    expect(schema.definitions.serviceLogLevel.enum).toEqual(["", ...offered])
  })

  it("refuses a level no service reads, naming the value", async () => {
    expect(await refusal("log.level=Verbose")).toContain("/log/level")
    expect(await refusal("referential.logLevel=Verbose")).toContain("/referential/logLevel")
  })
})

describe("retention", () => {
  const retentionEnv = (deployment: K8sObject) =>
    Object.fromEntries(["RETENTION_DELIVERIES", "RETENTION_SECURITY_LOG", "RETENTION_OUTBOX", "RETENTION_PAT_REQUESTS", "RETENTION_INTERVAL"].map((name) => [name, envOf(deployment, name).value]))

  it("gives every service the services' own defaults, and what values.yaml sets instead", async () => {
    const defaults = await render()
    const expected = {
      RETENTION_DELIVERIES: RetentionDefaults.deliveries,
      RETENTION_SECURITY_LOG: RetentionDefaults.securityLog,
      RETENTION_OUTBOX: RetentionDefaults.outbox,
      RETENTION_PAT_REQUESTS: RetentionDefaults.patRequests,
      RETENTION_INTERVAL: RetentionDefaults.interval
    }
    for (const component of services) expect(retentionEnv(find(defaults, "Deployment", `${prefix}-${component}`)), component).toEqual(expected)
    const set = await render("--set", "retention.deliveries=14d", "--set", "retention.outbox=off", "--set", "retention.interval=1h")
    expect(retentionEnv(find(set, "Deployment", `${prefix}-webhook-dispatcher`))).toEqual({
      ...expected, RETENTION_DELIVERIES: "14d", RETENTION_OUTBOX: "off", RETENTION_INTERVAL: "1h"
    })
  })

  it("takes only periods the services read, and refuses what they would refuse at start, naming the value", async () => {
    const read = (config: typeof Retention.deliveries, name: string, value: string) =>
      Result.isSuccess(Effect.runSync(Effect.result(Effect.provideService(config, ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord({ [name]: value }))))) ? "read" : "refused"
    for (const value of ["7d", "168h", "30d", "off"]) {
      expect(await refusal(`retention.deliveries=${value}`), value).toBe("accepted")
      expect(read(Retention.deliveries, "RETENTION_DELIVERIES", value), value).toBe("read")
    }
    for (const value of ["6d", "167h", "0d", "30", "1 month"]) {
      expect(await refusal(`retention.deliveries=${value}`), value).toContain("/retention/deliveries")
      expect(read(Retention.deliveries, "RETENTION_DELIVERIES", value), value).toBe("refused")
    }
    expect(await refusal("retention.securityLog=1y")).toContain("/retention/securityLog")
    expect(await refusal("retention.outbox=0m")).toContain("/retention/outbox")
    expect(await refusal("retention.interval=0s")).toContain("/retention/interval")
  })
})

describe("the chart's README", () => {
  it("lists every value of values.yaml", () => {
    const values = parse(readFileSync(`${chart}/values.yaml`, "utf8")) as Record<string, unknown>
    const readme = readFileSync(`${chart}/README.md`, "utf8")
    // Maps whose keys are the user's (resources, labels...) are one value.
    const whole = new Set(["resources", "labels", "podSecurityContext", "containerSecurityContext"])
    const leaves = (map: Record<string, unknown>, prefix: string): ReadonlyArray<string> =>
      Object.entries(map).flatMap(([key, value]) => {
        const path = prefix === "" ? key : `${prefix}.${key}`
        const nested = value !== null && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length > 0 && !whole.has(key)
        return nested ? leaves(value as Record<string, unknown>, path) : [path]
      })
    const all = leaves(values, "")
    expect(all.length).toBeGreaterThan(150)
    expect(all.filter((path) => !readme.includes(`\`${path}\``))).toEqual([])
  })
})

describe("NOTES.txt", () => {
  it("says what was installed and how to reach it, from the values", async () => {
    const notes = async (...values: ReadonlyArray<string>) => {
      const { stdout } = await helmRun("install", "rel", chart, "--dry-run=client", "--namespace", "portfolio", ...minimal, ...values)
      return stdout.slice(stdout.indexOf("NOTES:"))
    }
    const defaults = await notes()
    expect(defaults).toContain(`kubectl -n portfolio logs job/${prefix}-migrations --all-containers`)
    expect(defaults).toContain("helm test rel -n portfolio")
    expect(defaults).toContain("No ServiceMonitor: this cluster does not serve monitoring.coreos.com/v1")
    expect(defaults).toContain("give\nthose internalSecret.existingSecret")
    const every = await notes("-f", allOptions)
    expect(every).toContain("kubectl -n portfolio exec deploy/ap-admintools -- portfolio pat create --tenant acme --email admin@acme.example --scope write")
    // The first tenant-admin's link to set a password: where it went, and with local mail the command that reads it.
    expect(every).toContain("The tenant-admin is mailed a link to set their password (it works once, for 7 days), unless their account already\nhas one")
    const local = await notes("--set", "firstTenant.slug=trial", "--set", "firstTenant.adminEmail=admin@trial.example", "--set", "provisioning.mailTransport=local")
    expect(local).toContain(`Mail is kept in the database (provisioning.mailTransport=local): read that link with\n  kubectl -n portfolio exec deploy/${prefix}-provisioning -- portfolio mail list --to admin@trial.example\n`)
    expect(local).toContain(`kubectl -n portfolio logs job/${prefix}-first-tenant`)
    // Without the Ingress, the link's address is provisioning's own port, forwarded.
    expect(local).toContain(`the link (http://localhost:8084/accept/...) is served through\n  kubectl -n portfolio port-forward svc/${prefix}-provisioning 8084:8084\n`)
    expect(local).toContain("(with admintools.enabled=true, or from any pod where the portfolio CLI is set up as below)")
    expect(every).not.toContain("port-forward svc/ap-provisioning")
    expect(every).not.toContain("(with admintools.enabled=true")
    expect(defaults).not.toContain("NATS: the release's own")
    expect(await notes("--set", "nats.bundled.enabled=true")).toContain(`NATS: the release's own single JetStream server, ${prefix}-nats:4222`)
    const smtp = await notes("--set", "firstTenant.slug=trial", "--set", "firstTenant.adminEmail=admin@trial.example")
    expect(smtp).toContain("The mail goes through provisioning.smtp.")
    expect(smtp).not.toContain("portfolio mail list")
    expect(every).toContain("The ServiceMonitor ap has Prometheus scrape them (labels release=kube-prometheus-stack).")
    // The console: where browsers find it, and without the Ingress how to get there.
    expect(every).toContain("/accept (the invitation page) to provisioning,\n  and /console to the console.")
    expect(every).toContain("Console: https://portfolio.example.com/console\n")
    expect(every).not.toContain("port-forward svc/ap-console")
    expect(defaults).toContain(`Console: http://localhost:8088/console\n`)
    expect(defaults).toContain(`kubectl -n portfolio port-forward svc/${prefix}-console 8088:8088\n`)
    expect(await notes("--set", "console.enabled=false")).not.toContain("Console:")
    expect(every).toContain("Only pods labelled team.example.com/operator=yes reach those ports")
    expect(every).not.toContain("existingSecret:")
  })
})
