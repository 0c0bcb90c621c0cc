import { describe, expect, it } from "vitest"
import { nginxConfig, requestsPerUpstream } from "./ingress.js"
import { bytesOf, cpusOf, installOrder, planWorkloads, UnknownField, type K8sObject } from "./podSpec.js"
import { panelQueries, scrapeConfigs, substitute } from "./prometheus.js"

/** The rehearsal's translations, on small objects shaped as the chart renders them. */
const labels = { "app.kubernetes.io/name": "ap", "app.kubernetes.io/component": "api" }
const secret: K8sObject = { kind: "Secret", metadata: { name: "s" }, data: { url: Buffer.from("postgres://x\nline two").toString("base64") } }
const service: K8sObject = {
  kind: "Service",
  metadata: { name: "ap-api", labels: { ...labels, "architecture-portfolio/admin": "true" } },
  spec: { selector: labels, ports: [{ name: "http", port: 8080, targetPort: "http" }, { name: "admin", port: 8081, targetPort: "admin" }] }
}
const deployment = (containerExtra: Record<string, unknown> = {}, specExtra: Record<string, unknown> = {}): K8sObject => ({
  kind: "Deployment",
  metadata: { name: "ap-api" },
  spec: {
    replicas: 2,
    selector: { matchLabels: labels },
    strategy: { type: "RollingUpdate" },
    template: {
      metadata: { labels },
      spec: {
        automountServiceAccountToken: false,
        enableServiceLinks: false,
        serviceAccountName: "ap",
        securityContext: { runAsUser: 1000, runAsGroup: 1000, runAsNonRoot: true, fsGroup: 1000, seccompProfile: { type: "RuntimeDefault" } },
        terminationGracePeriodSeconds: 30,
        volumes: [{ name: "tmp", emptyDir: { sizeLimit: "64Mi" } }],
        containers: [
          {
            name: "api",
            image: "localhost/ap:rehearsal",
            imagePullPolicy: "Never",
            command: ["node", "dist/api/main.mjs"],
            env: [
              { name: "PORT", value: "8080" },
              { name: "URL", value: "http://$(PORT)/x" },
              { name: "DATABASE_URL", valueFrom: { secretKeyRef: { name: "s", key: "url" } } },
              { name: "POD", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } }
            ],
            ports: [{ name: "http", containerPort: 8080, protocol: "TCP" }, { name: "admin", containerPort: 8081, protocol: "TCP" }],
            resources: { requests: { cpu: "100m", memory: "256Mi" }, limits: { memory: "512Mi", cpu: "1500m" } },
            securityContext: { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] }, privileged: false },
            volumeMounts: [{ name: "tmp", mountPath: "/tmp" }],
            readinessProbe: { httpGet: { path: "/readyz", port: "admin" }, periodSeconds: 5, failureThreshold: 2 },
            ...containerExtra
          }
        ],
        ...specExtra
      }
    }
  }
})

const plan = (objects: ReadonlyArray<K8sObject>) => planWorkloads({ namespace: "ns", objects })

describe("pod specs planned for podman", () => {
  it("runs each replica with the rendered command, environment, user, root file system, capabilities, limits and volumes", () => {
    const { workloads, notHonoured } = plan([secret, service, deployment()])
    expect(workloads).toHaveLength(1)
    const [first, second] = workloads[0]!.pods
    expect([first!.name, second!.name]).toEqual(["ap-api-0", "ap-api-1"])
    expect(first!.aliases).toEqual(["ap-api"])
    const container = first!.containers[0]!
    expect(container.env).toEqual({ PORT: "8080", URL: "http://8080/x", DATABASE_URL: "postgres://x\nline two", POD: "ap-api-0" })
    const args = container.args.join(" ")
    for (const wanted of ["--pull=never", "--user 1000:1000", "--group-add 1000", "--read-only --read-only-tmpfs=false", "--security-opt no-new-privileges", "--cap-drop ALL", `--memory ${512 * 2 ** 20}`, "--cpus 1.5"]) {
      expect(args).toContain(wanted)
    }
    expect(args).toContain("--mount type=bind,source={volume:tmp},destination=/tmp")
    expect(container.args.slice(-2)).toEqual(['["node","dist/api/main.mjs"]', "localhost/ap:rehearsal"])
    expect(container.probes.readiness).toMatchObject({ kind: "http", port: 8081, path: "/readyz", periodSeconds: 5, failureThreshold: 2, timeoutSeconds: 1 })
    expect(first!.volumes).toEqual([{ name: "tmp", kind: "tmpfs", sizeBytes: 64 * 2 ** 20 }])
    expect([...notHonoured.keys()].sort()).toEqual([
      "Deployment/ap-api.spec.strategy",
      "Deployment/ap-api.spec.template.spec.containers[].resources.requests",
      "Deployment/ap-api.spec.template.spec.serviceAccountName"
    ])
  })

  it("fails on a pod-spec field it has never seen, naming it", () => {
    expect(() => plan([secret, service, deployment({}, { hostPID: true })])).toThrow(UnknownField)
    expect(() => plan([secret, service, deployment({ lifecycle: { preStop: { exec: { command: ["sleep", "5"] } } } })])).toThrow(
      "Deployment/ap-api.spec.template.spec.containers[0].lifecycle"
    )
    expect(() => plan([secret, service, deployment({ readinessProbe: { grpc: { port: 8081 } } })])).toThrow(UnknownField)
  })

  it("refuses what it cannot honour rather than run it differently", () => {
    expect(() => plan([service, deployment()])).toThrow("Secret s is not among the rendered objects")
    expect(() => plan([secret, service, deployment({ imagePullPolicy: "Always" })])).toThrow("needs a registry")
    const remapped = { ...service, spec: { ...service["spec"], ports: [{ name: "http", port: 80, targetPort: "http" }] } }
    expect(() => plan([secret, remapped, deployment()])).toThrow("maps port 80 to 8080")
    expect(() => plan([secret, service, { kind: "StatefulSet", metadata: { name: "x" }, spec: {} }])).toThrow("a StatefulSet is not run here")
  })

  it("orders an install as Helm does: pre-install hooks by weight, the release, post-install hooks, tests apart", () => {
    const job = (name: string, hook: string, weight: string): K8sObject => ({
      kind: "Job",
      metadata: { name, annotations: { "helm.sh/hook": hook, "helm.sh/hook-weight": weight } },
      spec: { backoffLimit: 2, template: { metadata: {}, spec: { restartPolicy: "Never", containers: [{ name: "c", image: "i" }] } } }
    })
    const { workloads } = plan([secret, service, deployment(), job("late", "pre-install,pre-upgrade", "5"), job("early", "pre-install", "-1"), job("after", "post-install", "10")])
    const order = installOrder(workloads)
    expect(order.preInstall.map((w) => w.name)).toEqual(["early", "late"])
    expect(order.release.map((w) => w.name)).toEqual(["ap-api"])
    expect(order.postInstall.map((w) => w.name)).toEqual(["after"])
    expect(order.preInstall[0]!.backoffLimit).toBe(2)
  })

  it("reads Kubernetes quantities", () => {
    expect(bytesOf("512Mi")).toBe(536_870_912)
    expect(bytesOf("1G")).toBe(1e9)
    expect(bytesOf(1024)).toBe(1024)
    expect(cpusOf("250m")).toBe(0.25)
    expect(cpusOf(2)).toBe(2)
    expect(() => bytesOf("lots")).toThrow("not a quantity")
  })
})

describe("the ingress as ingress-nginx configures it", () => {
  const ingress: K8sObject = {
    kind: "Ingress",
    metadata: { name: "ap" },
    spec: {
      tls: [{ hosts: ["ap.localhost"], secretName: "tls" }],
      rules: [{ host: "ap.localhost", http: { paths: [{ path: "/api", pathType: "Prefix", backend: { service: { name: "ap-api", port: { name: "http" } } } }] } }]
    }
  }
  const config = (object: K8sObject) =>
    nginxConfig({ ingress: object, endpoints: () => ["10.0.0.2:8080", "10.0.0.3:8080"], listen: { host: "127.0.0.1", port: 8443 }, certificate: { cert: "c", key: "k" }, prefix: "/p" })

  it("routes a Prefix path to every pod of its Service over kept-alive connections, TLS only, the peer's address forwarded", () => {
    const text = config(ingress)
    expect(text).toContain("listen 127.0.0.1:8443 ssl;")
    expect(text).toContain("server_name ap.localhost;")
    expect(text).toMatch(/upstream upstream_ap_api_http \{\n {4}server 10\.0\.0\.2:8080 max_fails=0;\n {4}server 10\.0\.0\.3:8080 max_fails=0;\n {4}keepalive 320;/)
    expect(text).toContain("location = /api {")
    expect(text).toContain("location /api/ {")
    expect(text).not.toContain("location /api {")
    expect(text).toContain("proxy_set_header X-Forwarded-For $remote_addr;")
    expect(text).toContain('proxy_set_header Connection "";')
  })

  it("refuses an annotation it does not know, a host without TLS and a Service without endpoints", () => {
    expect(() => config({ ...ingress, metadata: { name: "ap", annotations: { "nginx.ingress.kubernetes.io/rewrite-target": "/" } } })).toThrow("rewrite-target")
    expect(config({ ...ingress, metadata: { name: "ap", annotations: { "nginx.ingress.kubernetes.io/proxy-read-timeout": "120" } } })).toContain("proxy_read_timeout 120s;")
    expect(() => config({ ...ingress, spec: { ...ingress["spec"], tls: [] } })).toThrow("has none")
    expect(() => nginxConfig({ ingress, endpoints: () => [], listen: { host: "127.0.0.1", port: 1 }, certificate: { cert: "c", key: "k" }, prefix: "/p" })).toThrow("no ready endpoint")
  })

  it("counts the requests each upstream served from the access log", () => {
    const log = ['127.0.0.1 "GET /api/v1/x HTTP/1.1" 200 12 0.004 10.0.0.2:8080 200 abc', '127.0.0.1 "GET /api/v1/x HTTP/1.1" 200 12 0.004 10.0.0.3:8080 200 def', '127.0.0.1 "GET /api/v1/x HTTP/1.1" 200 12 0.004 10.0.0.2:8080 200 ghi'].join("\n")
    expect(requestsPerUpstream(log)).toEqual(new Map([["10.0.0.2:8080", 2], ["10.0.0.3:8080", 1]]))
  })
})

describe("Prometheus as the ServiceMonitor configures it", () => {
  const monitor: K8sObject = {
    kind: "ServiceMonitor",
    metadata: { name: "ap" },
    spec: { jobLabel: "app.kubernetes.io/component", namespaceSelector: { matchNames: ["ns"] }, selector: { matchLabels: { "architecture-portfolio/admin": "true" } }, endpoints: [{ port: "admin", path: "/metrics", interval: "5s", scrapeTimeout: "4s" }] }
  }
  const pods = [0, 1].map((i) => ({ name: `ap-api-${i}`, ip: `10.0.0.${i + 2}`, labels, containers: [{ name: "api", ports: [{ name: "http", containerPort: 8080 }, { name: "admin", containerPort: 8081 }] }] }))

  it("scrapes every pod behind the selected Services' named port, labelled as the operator labels targets", () => {
    const [config] = scrapeConfigs(monitor, [service], pods, "ns")
    expect(config).toMatchObject({ job_name: "serviceMonitor/ns/ap/0", scrape_interval: "5s", scrape_timeout: "4s", metrics_path: "/metrics" })
    expect(config!.static_configs).toEqual(
      pods.map((pod) => ({ targets: [`${pod.ip}:8081`], labels: { job: "api", namespace: "ns", service: "ap-api", pod: pod.name, container: "api", endpoint: "admin" } }))
    )
  })

  it("refuses a field it does not know, and a monitor looking in another namespace", () => {
    expect(() => scrapeConfigs({ ...monitor, spec: { ...monitor["spec"], podTargetLabels: ["x"] } }, [service], pods, "ns")).toThrow("podTargetLabels")
    expect(() => scrapeConfigs({ ...monitor, spec: { ...monitor["spec"], endpoints: [{ port: "admin", honorLabels: true }] } }, [service], pods, "ns")).toThrow("honorLabels")
    expect(() => scrapeConfigs(monitor, [service], pods, "other")).toThrow("namespace other")
  })

  it("substitutes the dashboard's variables as Grafana does", () => {
    expect(substitute('rate(x{job=~"$job"}[$__rate_interval])', { job: ["gateway", "referential"] }, 5)).toBe('rate(x{job=~"(gateway|referential)"}[20s])')
    expect(substitute('x{job=~"${job}"}', { job: ["gateway"] }, 15)).toBe('x{job=~"gateway"}')
    expect(panelQueries({ panels: [{ title: "a", targets: [{ expr: "up" }, { expr: "x", hide: true }] }, { title: "row", panels: [{ title: "b", targets: [{ expr: "y" }] }] }] })).toEqual([
      { panel: "a", expr: "up" },
      { panel: "b", expr: "y" }
    ])
  })
})
