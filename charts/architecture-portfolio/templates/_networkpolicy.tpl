{{/*
The ingress rules of every admin port: the operators' pods (networkPolicy.operators) and, for
/metrics, Prometheus (networkPolicy.metrics). The chart's own clients (the first-tenant Job,
admintools, the helm test Pod) carry the operator labels in the release's namespace.
*/}}
{{- define "ap.operatorsOnAdmin" -}}
{{- /* Defaults live here, not in values.yaml, where Helm would merge them into the user's labels. */ -}}
{{- $operatorPods := include "ap.operatorLabels" . | fromYaml -}}
- from:
    - podSelector:
        matchLabels:
          {{- toYaml $operatorPods | nindent 10 }}
      {{- with .Values.networkPolicy.operators.namespaceLabels }}
      namespaceSelector:
        matchLabels:
          {{- toYaml . | nindent 10 }}
    # The operators live in other namespaces; the chart's own clients in this one.
    - podSelector:
        matchLabels:
          {{- toYaml (merge (dict "app.kubernetes.io/instance" $.Release.Name) $operatorPods) | nindent 10 }}
      {{- end }}
  ports:
    - port: admin
      protocol: TCP
{{- if .Values.networkPolicy.metrics.enabled }}
# Prometheus, for /metrics.
- from:
    - namespaceSelector:
        matchLabels:
          {{- toYaml (.Values.networkPolicy.metrics.namespaceLabels | default (dict "kubernetes.io/metadata.name" "monitoring")) | nindent 10 }}
      podSelector:
        matchLabels:
          {{- toYaml (.Values.networkPolicy.metrics.podLabels | default (dict "app.kubernetes.io/name" "prometheus")) | nindent 10 }}
  ports:
    - port: admin
      protocol: TCP
{{- end }}
{{- end -}}

{{/* The ingress controller's pods, as the peers of a rule (networkPolicy.ingressController). */}}
{{- define "ap.ingressControllerPeers" -}}
{{- /* Defaults live here, not in values.yaml, where Helm would merge them into the user's labels. */ -}}
- namespaceSelector:
    matchLabels:
      {{- toYaml (.Values.networkPolicy.ingressController.namespaceLabels | default (dict "kubernetes.io/metadata.name" "ingress-nginx")) | nindent 6 }}
  {{- with .Values.networkPolicy.ingressController.podLabels }}
  podSelector:
    matchLabels:
      {{- toYaml . | nindent 6 }}
  {{- end }}
{{- end -}}

{{/* Egress rule to (dict "to" <peers or empty> "default" <peers> "ports" <list> "protocols" <list>). */}}
{{- define "ap.egressRule" -}}
- to:
    {{- toYaml (.to | default .default) | nindent 4 }}
  ports:
    {{- range $port := .ports }}
    {{- range $protocol := $.protocols }}
    - port: {{ $port }}
      protocol: {{ $protocol }}
    {{- end }}
    {{- end }}
{{- end -}}

{{/*
The webhook dispatcher's policy. It connects to URLs tenants choose, so unlike the other services it
is held on egress too: DNS, PostgreSQL, NATS (and the OTLP collector) inside the cluster, and the
webhook ports anywhere but the private, shared, link-local and loopback ranges, so that a
subscription cannot reach the cluster's own services or the cloud's metadata endpoint even if the
dispatcher's own check (WEBHOOK_ALLOW_PRIVATE_TARGETS) were bypassed by DNS rebinding or a bug.
*/}}
{{- define "ap.webhookDispatcherNetworkPolicy" -}}
{{- $ctx := dict "root" . "component" "webhook-dispatcher" -}}
{{- $egress := .Values.webhookDispatcher.egress -}}
{{- $anyPod := list (dict "namespaceSelector" (dict)) -}}
{{- $kubeDns := list (dict "namespaceSelector" (dict "matchLabels" (dict "kubernetes.io/metadata.name" "kube-system")) "podSelector" (dict "matchLabels" (dict "k8s-app" "kube-dns"))) -}}
{{- $private4 := list "10.0.0.0/8" "172.16.0.0/12" "192.168.0.0/16" "100.64.0.0/10" "169.254.0.0/16" "127.0.0.0/8" "0.0.0.0/8" -}}
{{- $private6 := list "fc00::/7" "fe80::/10" "::1/128" -}}
{{- $internet4 := dict "cidr" "0.0.0.0/0" -}}
{{- $internet6 := dict "cidr" "::/0" -}}
{{- if not $egress.allowPrivateTargets -}}
{{- $_ := set $internet4 "except" $private4 -}}
{{- $_ := set $internet6 "except" $private6 -}}
{{- end -}}
{{- $targets := list (dict "ipBlock" $internet4) (dict "ipBlock" $internet6) -}}
{{- range $egress.extraAllowedCidrs -}}
{{- $targets = append $targets (dict "ipBlock" (dict "cidr" .)) -}}
{{- end }}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "ap.componentName" $ctx }}
  labels:
    {{- include "ap.labels" $ctx | nindent 4 }}
spec:
  podSelector:
    matchLabels:
      {{- include "ap.selectorLabels" $ctx | nindent 6 }}
  policyTypes:
    - Ingress
    - Egress
  ingress:
    {{- if .Values.console.enabled }}
    # The console manages the tenants' subscriptions for the member signed in to it.
    - from:
        - podSelector:
            matchLabels:
              {{- include "ap.selectorLabels" (dict "root" . "component" "console") | nindent 14 }}
      ports:
        - port: admin
          protocol: TCP
    {{- end }}
    {{- include "ap.operatorsOnAdmin" . | nindent 4 }}
  egress:
    {{- include "ap.egressRule" (dict "to" $egress.dns.to "default" $kubeDns "ports" $egress.dns.ports "protocols" (list "UDP" "TCP")) | nindent 4 }}
    {{- include "ap.egressRule" (dict "to" $egress.database.to "default" $anyPod "ports" $egress.database.ports "protocols" (list "TCP")) | nindent 4 }}
    {{- include "ap.egressRule" (dict "to" $egress.nats.to "default" $anyPod "ports" $egress.nats.ports "protocols" (list "TCP")) | nindent 4 }}
    {{- if .Values.telemetry.otlpEndpoint }}
    {{- include "ap.egressRule" (dict "to" $egress.telemetry.to "default" $anyPod "ports" $egress.telemetry.ports "protocols" (list "TCP")) | nindent 4 }}
    {{- end }}
    {{- include "ap.egressRule" (dict "to" $targets "default" list "ports" (prepend $egress.extraPorts 443) "protocols" (list "TCP")) | nindent 4 }}
{{- end -}}

{{/*
The console's policy. Browsers reach its pages through the Ingress only (without the Ingress, through
kubectl port-forward, which no policy sees); it holds the services' internal secret, so it is held on
egress too: DNS, PostgreSQL, the admin ports of the gateway and provisioning (the only services it
calls), and the OTLP collector when one is set. Nothing else, the Internet least of all.
*/}}
{{- define "ap.consoleNetworkPolicy" -}}
{{- $ctx := dict "root" . "component" "console" -}}
{{- $egress := .Values.console.egress -}}
{{- $anyPod := list (dict "namespaceSelector" (dict)) -}}
{{- $kubeDns := list (dict "namespaceSelector" (dict "matchLabels" (dict "kubernetes.io/metadata.name" "kube-system")) "podSelector" (dict "matchLabels" (dict "k8s-app" "kube-dns"))) }}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "ap.componentName" $ctx }}
  labels:
    {{- include "ap.labels" $ctx | nindent 4 }}
spec:
  podSelector:
    matchLabels:
      {{- include "ap.selectorLabels" $ctx | nindent 6 }}
  policyTypes:
    - Ingress
    - Egress
  ingress:
    {{- if .Values.ingress.enabled }}
    # The pages (/console), routed by the Ingress.
    - from:
        {{- include "ap.ingressControllerPeers" . | nindent 8 }}
      ports:
        - port: http
          protocol: TCP
    {{- end }}
    {{- include "ap.operatorsOnAdmin" . | nindent 4 }}
  egress:
    {{- include "ap.egressRule" (dict "to" $egress.dns.to "default" $kubeDns "ports" $egress.dns.ports "protocols" (list "UDP" "TCP")) | nindent 4 }}
    {{- include "ap.egressRule" (dict "to" $egress.database.to "default" $anyPod "ports" $egress.database.ports "protocols" (list "TCP")) | nindent 4 }}
    {{- $called := list "gateway" "provisioning" }}
    {{- if .Values.webhookDispatcher.enabled }}{{ $called = append $called "webhook-dispatcher" }}{{ end }}
    {{- range $component := $called }}
    {{- $pods := list (dict "podSelector" (dict "matchLabels" (include "ap.selectorLabels" (dict "root" $ "component" $component) | fromYaml))) }}
    {{- include "ap.egressRule" (dict "to" $pods "ports" (list (index (include "ap.ports" $component | fromJsonArray) 1)) "protocols" (list "TCP")) | nindent 4 }}
    {{- end }}
    {{- if .Values.telemetry.otlpEndpoint }}
    {{- include "ap.egressRule" (dict "to" $egress.telemetry.to "default" $anyPod "ports" $egress.telemetry.ports "protocols" (list "TCP")) | nindent 4 }}
    {{- end }}
{{- end -}}
