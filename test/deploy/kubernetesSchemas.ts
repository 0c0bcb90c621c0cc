import { PrometheusRule, ServiceMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1"
import { Deployment, StatefulSet } from "kubernetes-models/apps/v1"
import { HorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2"
import { Job } from "kubernetes-models/batch/v1"
import { Ingress, NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1"
import { PodDisruptionBudget } from "kubernetes-models/policy/v1"
import { ConfigMap, Pod, Secret, Service, ServiceAccount } from "kubernetes-models/v1"
import type { K8sObject } from "./chartRendering.js"

// kubernetes-models validates an object against the API's own JSON schema (field names, types,
// required fields), which `helm lint` does not; it is the offline stand-in for a cluster's dry run.
// The ServiceMonitor and the PrometheusRule are checked against the Prometheus Operator's CRD schemas.
const models: Record<string, new (data: any) => { validate: () => void }> = {
  "v1/Service": Service,
  "v1/Secret": Secret,
  "v1/ConfigMap": ConfigMap,
  "v1/ServiceAccount": ServiceAccount,
  "v1/Pod": Pod,
  "apps/v1/Deployment": Deployment,
  "apps/v1/StatefulSet": StatefulSet,
  "batch/v1/Job": Job,
  "autoscaling/v2/HorizontalPodAutoscaler": HorizontalPodAutoscaler,
  "networking.k8s.io/v1/NetworkPolicy": NetworkPolicy,
  "networking.k8s.io/v1/Ingress": Ingress,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
  "monitoring.coreos.com/v1/ServiceMonitor": ServiceMonitor,
  "monitoring.coreos.com/v1/PrometheusRule": PrometheusRule
}

/** What the Kubernetes API schemas refuse in `objects`, one line an object; an unknown kind is refused too. */
export const invalid = (objects: ReadonlyArray<K8sObject>) =>
  objects.flatMap((object) => {
    const Model = models[`${object["apiVersion"]}/${object.kind}`]
    if (Model === undefined) return [`${object["apiVersion"]}/${object.kind} ${object.metadata.name}: no schema known to the test`]
    try {
      new Model(object).validate()
      return []
    } catch (error) {
      return [`${object.kind} ${object.metadata.name}: ${error instanceof Error ? error.message : String(error)}`]
    }
  })
