import { tracesSamplerConfig, TracesSamplerNames } from "@portfolio/platform/telemetry"
import { ConfigProvider, Effect, Result } from "effect"
import { createPrivateKey } from "node:crypto"
import { readFileSync } from "node:fs"
import { beforeAll, describe, expect, it } from "vitest"
import { CompiledServiceEnvironment } from "../../deploy/local/serviceProcess.js"
import { allOptions, chart, container, envOf, find, type K8sObject, kubeVersion, minimal, selector, services, useHelm } from "./chartRendering.js"
import { invalid } from "./kubernetesSchemas.js"

const { helmRun, render } = useHelm()

describe("helm lint", () => {
  it("passes --strict with the default values and with every option set", async () => {
    const defaults = await helmRun("lint", "--strict", chart, "--kube-version", kubeVersion, ...minimal)
    expect(defaults.stdout).toContain("1 chart(s) linted, 0 chart(s) failed")
    const every = await helmRun("lint", "--strict", chart, "--kube-version", kubeVersion, "-f", allOptions)
    expect(every.stdout).toContain("1 chart(s) linted, 0 chart(s) failed")
  })

  it("refuses values that values.schema.json does not allow, naming the value", async () => {
    const refused = await helmRun("template", "rel", chart, "--set", "gateway.replicas=0").then(
      () => "accepted",
      (error: { stderr: string }) => error.stderr
    )
    expect(refused).toContain("/gateway/replicas")
    const noDatabase = await helmRun("template", "rel", chart, "--set", "database.url=").then(
      () => "accepted",
      (error: { stderr: string }) => error.stderr
    )
    expect(noDatabase).toContain("/database/existingSecret")
    // Mail is sent by SMTP unless the install says local: with no SMTP server named, the install is
    // refused at once rather than leaving a provisioning pod that refuses to start.
    const noSmtp = await helmRun("template", "rel", chart).then(
      () => "accepted",
      (error: { stderr: string }) => error.stderr
    )
    expect(noSmtp).toContain("/provisioning/smtp")
    const local = await helmRun("template", "rel", chart, "--set", "provisioning.mailTransport=local")
    expect(local.stdout).toContain("MAIL_TRANSPORT")
  })
})

describe("default values", () => {
  let objects: ReadonlyArray<K8sObject>
  beforeAll(async () => {
    objects = await render()
  })

  it("renders exactly the expected objects", () => {
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      "Deployment/rel-architecture-portfolio-console",
      "Deployment/rel-architecture-portfolio-gateway",
      "Deployment/rel-architecture-portfolio-provisioning",
      "Deployment/rel-architecture-portfolio-referential",
      "Deployment/rel-architecture-portfolio-webhook-dispatcher",
      "Job/rel-architecture-portfolio-migrations",
      "NetworkPolicy/rel-architecture-portfolio-console",
      "NetworkPolicy/rel-architecture-portfolio-gateway",
      "NetworkPolicy/rel-architecture-portfolio-provisioning",
      "NetworkPolicy/rel-architecture-portfolio-referential",
      "NetworkPolicy/rel-architecture-portfolio-webhook-dispatcher",
      "Pod/rel-architecture-portfolio-test",
      "PodDisruptionBudget/rel-architecture-portfolio-gateway",
      "Secret/rel-architecture-portfolio",
      "Secret/rel-architecture-portfolio-migrations",
      "Service/rel-architecture-portfolio-console",
      "Service/rel-architecture-portfolio-console-admin",
      "Service/rel-architecture-portfolio-gateway",
      "Service/rel-architecture-portfolio-gateway-admin",
      "Service/rel-architecture-portfolio-provisioning",
      "Service/rel-architecture-portfolio-provisioning-admin",
      "Service/rel-architecture-portfolio-referential",
      "Service/rel-architecture-portfolio-referential-admin",
      "Service/rel-architecture-portfolio-webhook-dispatcher-admin",
      "ServiceAccount/rel-architecture-portfolio"
    ])
  })

  it.each(services)("runs $component's bundle as a hardened non-root pod probed on /healthz and /readyz of its admin port", ({ admin, component, http }) => {
    const deployment = find(objects, "Deployment", `rel-architecture-portfolio-${component}`)
    const pod = deployment.spec.template.spec
    const main = container(deployment)
    expect(deployment.spec.selector.matchLabels).toEqual(selector(component))
    expect(main.image).toBe("architecture-portfolio:0.1.87")
    // The compiled bundle with plain node (deploy/Dockerfile): no tsx, no sources in the image.
    expect(main.command).toEqual(["node", `dist/${component}/main.mjs`])
    expect(main.args).toBeUndefined()
    expect(main.ports).toEqual([
      { name: "http", containerPort: http, protocol: "TCP" },
      { name: "admin", containerPort: admin, protocol: "TCP" }
    ])
    expect(envOf(deployment, "PORT")).toEqual({ name: "PORT", value: String(http) })
    expect(envOf(deployment, "ADMIN_PORT")).toEqual({ name: "ADMIN_PORT", value: String(admin) })
    expect(main.livenessProbe.httpGet).toEqual({ path: "/healthz", port: "admin" })
    expect(main.readinessProbe.httpGet).toEqual({ path: "/readyz", port: "admin" })
    expect(main.startupProbe.httpGet).toEqual({ path: "/healthz", port: "admin" })
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: "RuntimeDefault" } })
    expect(main.securityContext).toEqual({
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      privileged: false,
      capabilities: { drop: ["ALL"] }
    })
    expect(main.resources.requests.cpu).toBeDefined()
    expect(main.resources.requests.memory).toBeDefined()
    expect(main.resources.limits.memory).toBeDefined()
    expect(main.volumeMounts).toEqual([{ name: "tmp", mountPath: "/tmp" }])
    expect(pod.volumes).toEqual([{ name: "tmp", emptyDir: { sizeLimit: "64Mi" } }])
    expect(pod.automountServiceAccountToken).toBe(false)
    expect(pod.serviceAccountName).toBe("rel-architecture-portfolio")
    // The migration Job migrated the schema before this Deployment changed: the service waits for it.
    expect(envOf(deployment, "MIGRATIONS").value).toBe("skip")
    expect(envOf(deployment, "MIGRATIONS_WAIT_TIMEOUT").value).toBe("60 seconds")
  })

  it("gives every service INTERNAL_SECRET and DATABASE_URL from the chart's one Secret", () => {
    for (const { component } of services) {
      const deployment = find(objects, "Deployment", `rel-architecture-portfolio-${component}`)
      expect(envOf(deployment, "INTERNAL_SECRET").valueFrom).toEqual({
        secretKeyRef: { name: "rel-architecture-portfolio", key: "internal-secret" }
      })
      expect(envOf(deployment, "DATABASE_URL").valueFrom).toEqual({
        secretKeyRef: { name: "rel-architecture-portfolio", key: "database-url" }
      })
      // No rotation under way, and a NATS that asks for no credentials (see chartNats.test.ts).
      const names = container(deployment).env.map((e: { name: string }) => e.name)
      expect(names.filter((name: string) => name === "INTERNAL_SECRET_PREVIOUS" || (name.startsWith("NATS_") && name !== "NATS_URL" && name !== "NATS_REPLICAS"))).toEqual([])
    }
    const secret = find(objects, "Secret", "rel-architecture-portfolio")
    expect(Object.keys(secret.data).sort()).toEqual(["database-url", "internal-secret", "oauth-signing-keys", "smtp-url"])
    expect(Buffer.from(secret.data["smtp-url"], "base64").toString()).toBe("smtp://mail.example.com:587")
    expect(Buffer.from(secret.data["internal-secret"], "base64").toString()).toMatch(/^[A-Za-z0-9]{48}$/)
    expect(Buffer.from(secret.data["database-url"], "base64").toString()).toBe("postgres://portfolio@postgresql:5432/portfolio")
  })

  it("gives the gateway alone OAUTH_SIGNING_KEYS, one generated P-256 key with a kid, as the gateway reads it", () => {
    for (const { component } of services) {
      const deployment = find(objects, "Deployment", `rel-architecture-portfolio-${component}`)
      expect(envOf(deployment, "OAUTH_SIGNING_KEYS")?.valueFrom).toEqual(
        component === "gateway" ? { secretKeyRef: { name: "rel-architecture-portfolio", key: "oauth-signing-keys" } } : undefined
      )
    }
    const keys = JSON.parse(Buffer.from(find(objects, "Secret", "rel-architecture-portfolio").data["oauth-signing-keys"], "base64").toString())
    expect(keys).toEqual([{ kid: expect.stringMatching(/^chart-[a-z0-9]{12}$/), pem: expect.stringContaining("PRIVATE KEY-----") }])
    const key = createPrivateKey(keys[0].pem)
    expect({ type: key.asymmetricKeyType, curve: key.asymmetricKeyDetails?.namedCurve }).toEqual({ type: "ec", curve: "prime256v1" })
  })

  it("points the console at the gateway's, provisioning's and the dispatcher's admin Services, and at its address without an Ingress", () => {
    const consoleDeployment = find(objects, "Deployment", "rel-architecture-portfolio-console")
    const env = (name: string) => envOf(consoleDeployment, name)?.value
    expect(env("GATEWAY_ADMIN_URL")).toBe("http://rel-architecture-portfolio-gateway-admin:8081")
    expect(env("PROVISIONING_ADMIN_URL")).toBe("http://rel-architecture-portfolio-provisioning-admin:8085")
    expect(env("WEBHOOK_ADMIN_URL")).toBe("http://rel-architecture-portfolio-webhook-dispatcher-admin:8087")
    // What kubectl port-forward gives a browser: its origin is the only one the console takes forms from.
    expect(env("CONSOLE_URL")).toBe("http://localhost:8088/console")
    expect(env("PUBLIC_BASE_URL")).toBe("http://localhost:8080/api/v1")
    expect(env("TRUSTED_PROXY_HOPS")).toBe("1")
    expect(["CONSOLE_SESSION_HOURS", "CONSOLE_SESSION_IDLE_MINUTES", "CONSOLE_SIGN_IN_MAX_FAILURES", "CONSOLE_SIGN_IN_MAX_FAILURES_PER_ADDRESS", "CONSOLE_LOCKOUT_MINUTES"].map(env))
      .toEqual(["8", "30", "5", "50", "15"])
    // It speaks to no NATS: no URL, no credential.
    expect(container(consoleDeployment).env.filter((e: { name: string }) => e.name.startsWith("NATS_"))).toEqual([])
  })

  it("gives the gateway alone its allocator settings, the image's for the others, as the services run here", () => {
    for (const component of [...services.map((s) => s.component), "webhook-dispatcher"]) {
      const deployment = find(objects, "Deployment", `rel-architecture-portfolio-${component}`)
      expect(envOf(deployment, "MALLOC_CONF")?.value, component).toBe(CompiledServiceEnvironment[component]?.["MALLOC_CONF"])
    }
    expect(CompiledServiceEnvironment["gateway"]?.["MALLOC_CONF"]).toMatch(/dirty_decay_ms:100,/)
  })

  it("points the gateway at the services' public Services", () => {
    const gateway = find(objects, "Deployment", "rel-architecture-portfolio-gateway")
    expect(envOf(gateway, "REFERENTIAL_URL").value).toBe("http://rel-architecture-portfolio-referential:8082")
    expect(envOf(gateway, "PROVISIONING_URL").value).toBe("http://rel-architecture-portfolio-provisioning:8084")
    expect(envOf(gateway, "PROVISIONING_ADMIN_URL").value).toBe("http://rel-architecture-portfolio-provisioning-admin:8085")
    expect(envOf(gateway, "PUBLIC_BASE_URL").value).toBe("http://localhost:8080/api/v1")
    expect(envOf(gateway, "RATE_LIMIT_PER_MINUTE").value).toBe("180")
    expect(envOf(gateway, "PARTNER_RATE_LIMIT_PER_MINUTE").value).toBe("600")
    expect(envOf(gateway, "SCIM_RATE_LIMIT_PER_MINUTE").value).toBe("600")
    // Idle connections outlive an ingress's upstream keep-alive (ingress-nginx: 60 s).
    expect(["HTTP_KEEP_ALIVE_TIMEOUT", "HTTP_HEADERS_TIMEOUT", "HTTP_REQUEST_TIMEOUT", "MAX_CONNECTIONS_PER_CLIENT"].map((name) => envOf(gateway, name)?.value))
      .toEqual(["75 seconds", "10 seconds", "20 seconds", "256"])
    expect(envOf(gateway, "GATEWAY_REPLICAS").value).toBe("2")
    const provisioning = find(objects, "Deployment", "rel-architecture-portfolio-provisioning")
    expect(envOf(provisioning, "PUBLIC_ACCEPT_URL").value).toBe("http://localhost:8084/accept")
    // /accept is reached through the ingress controller: its address is the last X-Forwarded-For entry.
    expect(envOf(provisioning, "TRUSTED_PROXY_HOPS").value).toBe("1")
    expect(envOf(provisioning, "MAIL_TRANSPORT").value).toBe("smtp")
    expect(envOf(provisioning, "SMTP_URL").valueFrom).toEqual({ secretKeyRef: { name: "rel-architecture-portfolio", key: "smtp-url" } })
  })

  it("keeps every admin Service and the referential, provisioning and console public Services ClusterIP", () => {
    for (const { admin, component, http } of services) {
      const publicService = find(objects, "Service", `rel-architecture-portfolio-${component}`)
      const adminService = find(objects, "Service", `rel-architecture-portfolio-${component}-admin`)
      expect(publicService.spec.type).toBe("ClusterIP")
      expect(adminService.spec.type).toBe("ClusterIP")
      expect(publicService.spec.ports).toEqual([{ name: "http", port: http, targetPort: "http", protocol: "TCP" }])
      expect(adminService.spec.ports).toEqual([{ name: "admin", port: admin, targetPort: "admin", protocol: "TCP" }])
      expect(publicService.spec.selector).toEqual(selector(component))
    }
  })

  it("admits only the gateway on the services' public ports, and only operators, Prometheus, the console and (provisioning's) the gateway on the admin ports", () => {
    const operators = { from: [{ podSelector: { matchLabels: { "architecture-portfolio/operator": "true" } } }], ports: [{ port: "admin", protocol: "TCP" }] }
    const prometheus = {
      from: [{
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } },
        podSelector: { matchLabels: { "app.kubernetes.io/name": "prometheus" } }
      }],
      ports: [{ port: "admin", protocol: "TCP" }]
    }
    // The console calls the gateway's, provisioning's and the dispatcher's admin APIs, and no other.
    const consolePods = { from: [{ podSelector: { matchLabels: selector("console") } }], ports: [{ port: "admin", protocol: "TCP" }] }
    const gateway = find(objects, "NetworkPolicy", "rel-architecture-portfolio-gateway")
    expect(gateway.spec.podSelector.matchLabels).toEqual(selector("gateway"))
    expect(gateway.spec.policyTypes).toEqual(["Ingress"])
    expect(gateway.spec.ingress).toEqual([{ ports: [{ port: "http", protocol: "TCP" }] }, consolePods, operators, prometheus])
    for (const component of ["referential", "provisioning"]) {
      const policy = find(objects, "NetworkPolicy", `rel-architecture-portfolio-${component}`)
      expect(policy.spec.podSelector.matchLabels).toEqual(selector(component))
      expect(policy.spec.policyTypes).toEqual(["Ingress"])
      expect(policy.spec.ingress).toEqual([
        { from: [{ podSelector: { matchLabels: selector("gateway") } }], ports: [{ port: "http", protocol: "TCP" }] },
        // The gateway reads a PAT requester's membership there before an approval.
        ...(component === "provisioning" ? [consolePods, { from: [{ podSelector: { matchLabels: selector("gateway") } }], ports: [{ port: "admin", protocol: "TCP" }] }] : []),
        operators,
        prometheus
      ])
    }
  })

  it("admits no browser on the console without the Ingress, and lets it reach only DNS, PostgreSQL and the three admin APIs", () => {
    const policy = find(objects, "NetworkPolicy", "rel-architecture-portfolio-console")
    expect(policy.spec.podSelector.matchLabels).toEqual(selector("console"))
    expect(policy.spec.policyTypes).toEqual(["Ingress", "Egress"])
    // Operators and Prometheus on the admin port only.
    expect(policy.spec.ingress.map((rule: any) => rule.ports)).toEqual([[{ port: "admin", protocol: "TCP" }], [{ port: "admin", protocol: "TCP" }]])
    expect(policy.spec.egress).toEqual([
      {
        to: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "kube-system" } }, podSelector: { matchLabels: { "k8s-app": "kube-dns" } } }],
        ports: [{ port: 53, protocol: "UDP" }, { port: 53, protocol: "TCP" }]
      },
      { to: [{ namespaceSelector: {} }], ports: [{ port: 5432, protocol: "TCP" }] },
      { to: [{ podSelector: { matchLabels: selector("gateway") } }], ports: [{ port: 8081, protocol: "TCP" }] },
      { to: [{ podSelector: { matchLabels: selector("provisioning") } }], ports: [{ port: 8085, protocol: "TCP" }] },
      { to: [{ podSelector: { matchLabels: selector("webhook-dispatcher") } }], ports: [{ port: 8087, protocol: "TCP" }] }
    ])
    // ... and the dispatcher admits it on its admin port.
    const dispatcher = find(objects, "NetworkPolicy", "rel-architecture-portfolio-webhook-dispatcher")
    expect(dispatcher.spec.ingress[0]).toEqual({ from: [{ podSelector: { matchLabels: selector("console") } }], ports: [{ port: "admin", protocol: "TCP" }] })
  })

  it("keeps a gateway pod available through voluntary disruptions", () => {
    const budget = find(objects, "PodDisruptionBudget", "rel-architecture-portfolio-gateway")
    expect(budget.spec).toEqual({ minAvailable: 1, unhealthyPodEvictionPolicy: "AlwaysAllow", selector: { matchLabels: selector("gateway") } })
    expect(find(objects, "Deployment", "rel-architecture-portfolio-gateway").spec.replicas).toBe(2)
  })
})

describe("every option set", () => {
  let objects: ReadonlyArray<K8sObject>
  beforeAll(async () => {
    objects = await render("-f", allOptions)
  })

  it("takes every secret from the existing Secrets and creates none", () => {
    expect(objects.filter((o) => o.kind === "Secret")).toEqual([])
    for (const { component } of services) {
      const deployment = find(objects, "Deployment", `ap-${component}`)
      expect(envOf(deployment, "INTERNAL_SECRET").valueFrom).toEqual({ secretKeyRef: { name: "portfolio-internal", key: "secret" } })
      expect(envOf(deployment, "DATABASE_URL").valueFrom).toEqual({ secretKeyRef: { name: "portfolio-database", key: "url" } })
      if (component === "gateway") expect(envOf(deployment, "OAUTH_SIGNING_KEYS").valueFrom).toEqual({ secretKeyRef: { name: "portfolio-oauth", key: "keys" } })
      expect(envOf(deployment, "INTERNAL_SECRET_PREVIOUS").valueFrom).toEqual({ secretKeyRef: { name: "portfolio-internal-previous", key: "secret" } })
      // The console speaks to no NATS, so it has no identity there.
      expect(envOf(deployment, "NATS_PASSWORD")?.valueFrom).toEqual(
        component === "console" ? undefined : { secretKeyRef: { name: `portfolio-nats-${component}`, key: "password" } }
      )
      expect(container(deployment).image).toBe(`registry.example.com/architecture-portfolio:1.2.3@sha256:${"0123456789abcdef".repeat(4)}`)
      expect(deployment.spec.template.spec.imagePullSecrets).toEqual([{ name: "registry-credentials" }])
      expect(deployment.spec.template.spec.nodeSelector).toEqual({ "node.example.com/pool": component })
      expect(deployment.spec.template.metadata.annotations).toEqual({ "prometheus.io/scrape": "false", "team.example.com/owner": component })
      expect(envOf(deployment, "LOG_FORMAT").value).toBe("logfmt")
    }
    const provisioning = find(objects, "Deployment", "ap-provisioning")
    expect(envOf(provisioning, "SMTP_URL").valueFrom).toEqual({ secretKeyRef: { name: "portfolio-smtp", key: "url" } })
    expect(envOf(provisioning, "MAIL_FROM").value).toBe("Portfolio <no-reply@portfolio.example.com>")
  })

  it("derives the public URLs from the Ingress host", () => {
    expect(envOf(find(objects, "Deployment", "ap-gateway"), "PUBLIC_BASE_URL").value).toBe("https://portfolio.example.com/api/v1")
    expect(envOf(find(objects, "Deployment", "ap-gateway"), "TRUSTED_PROXY_HOPS").value).toBe("1")
    expect(envOf(find(objects, "Deployment", "ap-gateway"), "PARTNER_RATE_LIMIT_PER_MINUTE").value).toBe("300")
    expect(envOf(find(objects, "Deployment", "ap-gateway"), "SCIM_RATE_LIMIT_PER_MINUTE").value).toBe("900")
    expect(["HTTP_KEEP_ALIVE_TIMEOUT", "HTTP_HEADERS_TIMEOUT", "HTTP_REQUEST_TIMEOUT", "MAX_CONNECTIONS_PER_CLIENT"].map((name) => envOf(find(objects, "Deployment", "ap-gateway"), name)?.value))
      .toEqual(["120 seconds", "5 seconds", "8 seconds", "0"])
    expect(envOf(find(objects, "Deployment", "ap-provisioning"), "PUBLIC_ACCEPT_URL").value).toBe("https://portfolio.example.com/accept")
    const consoleDeployment = find(objects, "Deployment", "ap-console")
    expect(envOf(consoleDeployment, "CONSOLE_URL").value).toBe("https://portfolio.example.com/console")
    // Provisioning names the console's address as the connections' redirect URIs: the same one.
    expect(envOf(find(objects, "Deployment", "ap-provisioning"), "CONSOLE_URL").value).toBe("https://portfolio.example.com/console")
    expect(envOf(consoleDeployment, "PUBLIC_BASE_URL").value).toBe("https://portfolio.example.com/api/v1")
    expect(envOf(consoleDeployment, "GATEWAY_ADMIN_URL").value).toBe("http://ap-gateway-admin:8081")
    expect(envOf(consoleDeployment, "PROVISIONING_ADMIN_URL").value).toBe("http://ap-provisioning-admin:8085")
    expect(["TRUSTED_PROXY_HOPS", "CONSOLE_SESSION_HOURS", "CONSOLE_SESSION_IDLE_MINUTES", "CONSOLE_SIGN_IN_MAX_FAILURES", "CONSOLE_SIGN_IN_MAX_FAILURES_PER_ADDRESS", "CONSOLE_LOCKOUT_MINUTES"]
      .map((name) => envOf(consoleDeployment, name)?.value)).toEqual(["2", "4", "20", "3", "30", "10"])
  })

  it("takes the console's address from console.publicUrl when given, plain http on an Ingress without TLS otherwise", async () => {
    const given = await render("-f", allOptions, "--set", "console.publicUrl=https://portal.example.com/console")
    expect(envOf(find(given, "Deployment", "ap-console"), "CONSOLE_URL").value).toBe("https://portal.example.com/console")
    const plain = await render("--set", "ingress.enabled=true", "--set", "ingress.host=portfolio.internal")
    expect(envOf(find(plain, "Deployment", "rel-architecture-portfolio-console"), "CONSOLE_URL").value).toBe("http://portfolio.internal/console")
    expect(await helmRun("template", "rel", chart, ...minimal, "--set", "console.publicUrl=https://portal.example.com/").then(() => "accepted", (error: { stderr: string }) => error.stderr))
      .toContain("/console/publicUrl")
  })

  it("routes /api to the gateway, /accept to provisioning and /console to the console, never an admin port", () => {
    const ingress = find(objects, "Ingress", "ap")
    expect(ingress.spec.ingressClassName).toBe("nginx")
    expect(ingress.spec.tls).toEqual([{ hosts: ["portfolio.example.com"], secretName: "portfolio-tls" }])
    expect(ingress.spec.rules).toEqual([
      {
        host: "portfolio.example.com",
        http: {
          paths: [
            { path: "/api", pathType: "Prefix", backend: { service: { name: "ap-gateway", port: { name: "http" } } } },
            { path: "/accept", pathType: "Prefix", backend: { service: { name: "ap-provisioning", port: { name: "http" } } } },
            { path: "/console", pathType: "Prefix", backend: { service: { name: "ap-console", port: { name: "http" } } } }
          ]
        }
      }
    ])
  })

  it("lets the ingress controller reach provisioning's and the console's public ports only, and operators from their namespace", () => {
    const operators = {
      from: [
        {
          podSelector: { matchLabels: { "team.example.com/operator": "yes" } },
          namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "operations" } }
        },
        // The chart's own clients (first-tenant Job, admintools, helm test) stay in the release's namespace.
        { podSelector: { matchLabels: { "team.example.com/operator": "yes", "app.kubernetes.io/instance": "rel" } } }
      ],
      ports: [{ port: "admin", protocol: "TCP" }]
    }
    const prometheus = {
      from: [{
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "observability" } },
        podSelector: { matchLabels: { "app.kubernetes.io/name": "prometheus", prometheus: "main" } }
      }],
      ports: [{ port: "admin", protocol: "TCP" }]
    }
    const gatewayPods = { podSelector: { matchLabels: selector("gateway", "portfolio") } }
    const controller = {
      from: [{
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "ingress" } },
        podSelector: { matchLabels: { "app.kubernetes.io/name": "ingress-nginx" } }
      }],
      ports: [{ port: "http", protocol: "TCP" }]
    }
    const consolePods = { from: [{ podSelector: { matchLabels: selector("console", "portfolio") } }], ports: [{ port: "admin", protocol: "TCP" }] }
    expect(find(objects, "NetworkPolicy", "ap-provisioning").spec.ingress).toEqual([
      { from: [gatewayPods], ports: [{ port: "http", protocol: "TCP" }] },
      controller,
      consolePods,
      { from: [gatewayPods], ports: [{ port: "admin", protocol: "TCP" }] },
      operators,
      prometheus
    ])
    expect(find(objects, "NetworkPolicy", "ap-console").spec.ingress).toEqual([controller, operators, prometheus])
    expect(find(objects, "NetworkPolicy", "ap-referential").spec.ingress).toEqual([
      { from: [gatewayPods], ports: [{ port: "http", protocol: "TCP" }] },
      operators,
      prometheus
    ])
  })

  it("holds the console's egress to the peers given", () => {
    const egress = find(objects, "NetworkPolicy", "ap-console").spec.egress
    expect(egress).toEqual([
      { to: [{ ipBlock: { cidr: "169.254.20.10/32" } }], ports: [{ port: 53, protocol: "UDP" }, { port: 53, protocol: "TCP" }] },
      { to: [{ ipBlock: { cidr: "10.1.0.0/24" } }], ports: [{ port: 5432, protocol: "TCP" }, { port: 6432, protocol: "TCP" }] },
      { to: [{ podSelector: { matchLabels: selector("gateway", "portfolio") } }], ports: [{ port: 8081, protocol: "TCP" }] },
      { to: [{ podSelector: { matchLabels: selector("provisioning", "portfolio") } }], ports: [{ port: 8085, protocol: "TCP" }] },
      { to: [{ podSelector: { matchLabels: selector("webhook-dispatcher", "portfolio") } }], ports: [{ port: 8087, protocol: "TCP" }] }
    ])
  })

  it("exposes only the gateway's public Service outside the cluster", () => {
    const gateway = find(objects, "Service", "ap-gateway")
    expect(gateway.spec.type).toBe("LoadBalancer")
    expect(gateway.metadata.annotations).toEqual({ "service.beta.kubernetes.io/aws-load-balancer-type": "nlb" })
    for (const name of ["ap-gateway-admin", "ap-referential", "ap-referential-admin", "ap-provisioning", "ap-provisioning-admin", "ap-webhook-dispatcher-admin", "ap-console", "ap-console-admin"]) {
      expect(find(objects, "Service", name).spec.type).toBe("ClusterIP")
    }
    expect(find(objects, "PodDisruptionBudget", "ap-gateway").spec.minAvailable).toBe(2)
  })

  it("renders no NetworkPolicy when they are turned off", async () => {
    const without = await render("-f", allOptions, "--set", "networkPolicy.enabled=false")
    expect(without.filter((o) => o.kind === "NetworkPolicy")).toEqual([])
  })

  it("gives every service the OTLP endpoint when telemetry.otlpEndpoint is set, and none by default", async () => {
    const traced = await render("-f", allOptions, "--set", "telemetry.otlpEndpoint=http://otel-collector:4318")
    const plain = await render("-f", allOptions)
    for (const { component } of services) {
      expect(envOf(find(traced, "Deployment", `ap-${component}`), "OTEL_EXPORTER_OTLP_ENDPOINT").value).toBe("http://otel-collector:4318")
      expect(container(find(plain, "Deployment", `ap-${component}`)).env.map((e: { name: string }) => e.name)).not.toContain("OTEL_EXPORTER_OTLP_ENDPOINT")
    }
    // The console's policy lets it reach the collector only then.
    const collector = { to: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "observability" } } }], ports: [{ port: 4318, protocol: "TCP" }] }
    expect(find(traced, "NetworkPolicy", "ap-console").spec.egress).toContainEqual(collector)
    expect(find(plain, "NetworkPolicy", "ap-console").spec.egress).not.toContainEqual(collector)
  })
})

describe("trace sampling", () => {
  const samplerOf = (objects: ReadonlyArray<K8sObject>) => {
    const components = ["console", "gateway", "provisioning", "referential", "webhook-dispatcher"]
    const deployments = objects.filter((o) => o.kind === "Deployment" && components.includes(o.metadata.labels?.["app.kubernetes.io/component"] ?? ""))
    expect(deployments).toHaveLength(components.length)
    return new Set(deployments.map((d) => JSON.stringify([envOf(d, "OTEL_TRACES_SAMPLER")?.value, envOf(d, "OTEL_TRACES_SAMPLER_ARG")?.value])))
  }

  it("gives every service's Deployment telemetry.tracesSampler and telemetry.tracesSamplerArg, collector or not", async () => {
    expect(samplerOf(await render())).toEqual(new Set([JSON.stringify(["parentbased_always_on", "1.0"])]))
    expect(samplerOf(await render("--set", "telemetry.otlpEndpoint=http://otel-collector:4318"))).toEqual(new Set([JSON.stringify(["parentbased_always_on", "1.0"])]))
    expect(samplerOf(await render("-f", allOptions))).toEqual(new Set([JSON.stringify(["parentbased_traceidratio", "0.25"])]))
    // A ratio written as a YAML number reaches the services as the same number.
    expect(samplerOf(await render("--set", "telemetry.tracesSampler=traceidratio", "--set", "telemetry.tracesSamplerArg=0.1"))).toEqual(
      new Set([JSON.stringify(["traceidratio", "0.1"])])
    )
  })

  it("refuses a sampler the services would refuse, naming the value, and offers all they take", async () => {
    const refusal = (...set: ReadonlyArray<string>) =>
      helmRun("template", "rel", chart, ...minimal, ...set).then(() => "accepted", (error: { stderr: string }) => error.stderr)
    const schema = JSON.parse(readFileSync(`${chart}/values.schema.json`, "utf8"))
    expect(schema.properties.telemetry.properties.tracesSampler.enum).toEqual(TracesSamplerNames)
    const serviceReads = (env: Record<string, string>) =>
      Result.isSuccess(Effect.runSync(Effect.result(Effect.provideService(tracesSamplerConfig, ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord(env)))))
    for (const sampler of ["always", "jaeger_remote", "AlwaysOn"]) {
      expect(await refusal("--set", `telemetry.tracesSampler=${sampler}`)).toContain("/telemetry/tracesSampler")
    }
    for (const ratio of ["1.5", "-0.1", "half", "1.01", "0x1"]) {
      expect(await refusal("--set-string", `telemetry.tracesSamplerArg=${ratio}`), ratio).toContain("/telemetry/tracesSamplerArg")
      expect(serviceReads({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: ratio }), ratio).toBe(false)
    }
    for (const ratio of ["1.5", "-0.1"]) {
      expect(await refusal("--set", `telemetry.tracesSamplerArg=${ratio}`), ratio).toContain("/telemetry/tracesSamplerArg")
    }
    for (const ratio of ["", "0", "0.05", ".5", "1", "1.0"]) {
      expect(await refusal("--set-string", `telemetry.tracesSamplerArg=${ratio}`), ratio).toBe("accepted")
      expect(serviceReads({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: ratio }), ratio).toBe(true)
    }
  })
})

describe("the Kubernetes API schemas", () => {
  it("accepts every object rendered with the least values and with every option set", async () => {
    const minimalObjects = await render()
    const everyObjects = await render("-f", allOptions)
    expect(new Set(everyObjects.map((o) => o.kind))).toEqual(new Set([
      "Service", "ServiceAccount", "Deployment", "NetworkPolicy", "Ingress", "PodDisruptionBudget", "HorizontalPodAutoscaler",
      "Job", "Pod", "ServiceMonitor", "PrometheusRule", "ConfigMap"
    ]))
    expect(invalid(minimalObjects)).toEqual([])
    expect(invalid(everyObjects)).toEqual([])
  })

  it("would notice a broken object", () => {
    const broken = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "x" }, spec: { replicas: "two", template: {} } }
    expect(invalid([broken as unknown as K8sObject])).toHaveLength(1)
    const monitor = { apiVersion: "monitoring.coreos.com/v1", kind: "ServiceMonitor", metadata: { name: "x" }, spec: { endpoints: [{ port: 8081 }], selector: {} } }
    expect(invalid([monitor as unknown as K8sObject])).toHaveLength(1)
  })
})
