import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"

/**
 * Just enough of a Kubernetes API server for `helm template --dry-run=server`: version, discovery
 * of the kinds the chart renders (and of the Prometheus Operator's, when asked), and GET of the
 * objects given, so that the chart's `lookup` and `.Capabilities.APIVersions` meet what a real
 * cluster would answer. Every other object is absent (404); nothing is ever written.
 */
export interface FakeKubernetes {
  readonly kubeconfig: string
  /** The paths of every request, for the tests that check what helm asked. */
  readonly requests: ReadonlyArray<string>
  readonly close: () => Promise<void>
}

type Existing = {
  readonly apiVersion: string
  readonly kind: string
  readonly metadata: { readonly name: string; readonly namespace: string; readonly [key: string]: unknown }
  readonly [key: string]: unknown
}

const kinds: Record<string, ReadonlyArray<readonly [string, string]>> = {
  v1: [["secrets", "Secret"], ["services", "Service"], ["pods", "Pod"], ["configmaps", "ConfigMap"], ["serviceaccounts", "ServiceAccount"]],
  "apps/v1": [["deployments", "Deployment"], ["statefulsets", "StatefulSet"]],
  "batch/v1": [["jobs", "Job"]],
  "policy/v1": [["poddisruptionbudgets", "PodDisruptionBudget"]],
  "networking.k8s.io/v1": [["networkpolicies", "NetworkPolicy"], ["ingresses", "Ingress"]],
  "autoscaling/v2": [["horizontalpodautoscalers", "HorizontalPodAutoscaler"]]
}
const prometheusOperator = { "monitoring.coreos.com/v1": [["servicemonitors", "ServiceMonitor"]] as const }

/** An object as a previous `helm install` of `release` left it (Helm refuses to adopt others). */
export const ownedBy = (release: string, object: Existing): Existing => ({
  ...object,
  metadata: {
    ...object.metadata,
    labels: { "app.kubernetes.io/managed-by": "Helm" },
    annotations: { "meta.helm.sh/release-name": release, "meta.helm.sh/release-namespace": object.metadata.namespace }
  }
})

export const startFakeKubernetes = async (options: { readonly objects?: ReadonlyArray<Existing>; readonly prometheusOperator?: boolean } = {}): Promise<FakeKubernetes> => {
  const served: Record<string, ReadonlyArray<readonly [string, string]>> = { ...kinds, ...(options.prometheusOperator === true ? prometheusOperator : {}) }
  const resourceOf = (apiVersion: string, kind: string) => served[apiVersion]?.find(([, k]) => k === kind)?.[0]
  const objects = new Map<string, Existing>(
    (options.objects ?? []).map((o) => {
      const base = o.apiVersion.includes("/") ? `/apis/${o.apiVersion}` : `/api/${o.apiVersion}`
      return [`${base}/namespaces/${o.metadata.namespace}/${resourceOf(o.apiVersion, o.kind)}/${o.metadata.name}`, o] as const
    })
  )
  const requests: Array<string> = []
  const resourceList = (groupVersion: string) => ({
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion,
    resources: served[groupVersion]!.map(([name, kind]) => ({ name, singularName: kind.toLowerCase(), namespaced: true, kind, verbs: ["get", "list"] }))
  })
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0]!
    requests.push(path)
    const answer = (status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json" })
      response.end(JSON.stringify(body))
    }
    if (path === "/version") return answer(200, { major: "1", minor: "33", gitVersion: "v1.33.0" })
    // Plain discovery documents: helm asks for the aggregated ones first and takes these instead.
    if (path === "/api") return answer(200, { kind: "APIVersions", versions: ["v1"], serverAddressByClientCIDRs: [] })
    if (path === "/apis") {
      const groups = Object.keys(served).filter((gv) => gv.includes("/")).map((gv) => {
        const [name, version] = gv.split("/") as [string, string]
        return { name, versions: [{ groupVersion: gv, version }], preferredVersion: { groupVersion: gv, version } }
      })
      return answer(200, { kind: "APIGroupList", apiVersion: "v1", groups })
    }
    if (path === "/api/v1") return answer(200, resourceList("v1"))
    const group = /^\/apis\/([^/]+\/[^/]+)$/.exec(path)?.[1]
    if (group !== undefined && served[group] !== undefined) return answer(200, resourceList(group))
    const found = objects.get(path)
    if (found !== undefined) return answer(200, found)
    answer(404, { kind: "Status", apiVersion: "v1", status: "Failure", reason: "NotFound", code: 404 })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const folder = await mkdtemp(join(tmpdir(), "ap-kube-"))
  const kubeconfig = join(folder, "kubeconfig")
  await writeFile(kubeconfig, [
    "apiVersion: v1",
    "kind: Config",
    "clusters: [{ name: fake, cluster: { server: \"http://127.0.0.1:" + String((server.address() as AddressInfo).port) + "\" } }]",
    "contexts: [{ name: fake, context: { cluster: fake } }]",
    "users: [{ name: fake, user: {} }]",
    "current-context: fake"
  ].join("\n"), { mode: 0o600 })
  return {
    kubeconfig,
    requests,
    close: async () => {
      await new Promise((resolve) => server.close(resolve))
      await rm(folder, { recursive: true, force: true })
    }
  }
}
