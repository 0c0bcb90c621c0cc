{{- define "ap.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "ap.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Object name of a component: (dict "root" $ "component" "gateway" "suffix" "admin") */}}
{{- define "ap.componentName" -}}
{{- $base := printf "%s-%s" (include "ap.fullname" .root) .component -}}
{{- if .suffix -}}
{{- printf "%s-%s" ($base | trunc 56 | trimSuffix "-") .suffix -}}
{{- else -}}
{{- $base | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "ap.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ap.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "ap.labels" -}}
{{ include "ap.selectorLabels" . }}
app.kubernetes.io/part-of: architecture-portfolio
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* Labels of the chart-wide objects (the Secret). */}}
{{- define "ap.commonLabels" -}}
app.kubernetes.io/name: {{ include "ap.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: architecture-portfolio
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/*
Public and admin container ports of each service: the services' own defaults (libs/platform/src/config/Ports.ts).
A public port of 0: the service has none (the webhook dispatcher serves its admin API only).
*/}}
{{- define "ap.ports" -}}
{{- $ports := dict "gateway" (list 8080 8081) "referential" (list 8082 8083) "provisioning" (list 8084 8085) "webhook-dispatcher" (list 0 8087) "console" (list 8088 8089) -}}
{{- get $ports . | toJson -}}
{{- end -}}

{{/* The key of a component's values (webhookDispatcher for webhook-dispatcher): a dash cannot be read as .Values.a-b. */}}
{{- define "ap.valuesKey" -}}
{{- get (dict "webhook-dispatcher" "webhookDispatcher") . | default . -}}
{{- end -}}

{{- define "ap.publicScheme" -}}
{{- if .Values.ingress.tls.enabled }}https{{ else }}http{{ end -}}
{{- end -}}

{{- define "ap.publicBaseUrl" -}}
{{- if .Values.gateway.publicBaseUrl -}}
{{- .Values.gateway.publicBaseUrl -}}
{{- else if .Values.ingress.enabled -}}
{{- printf "%s://%s/api/v1" (include "ap.publicScheme" .) .Values.ingress.host -}}
{{- else -}}
http://localhost:8080/api/v1
{{- end -}}
{{- end -}}

{{/* CONSOLE_URL: its origin is the only one the console takes forms from, its scheme sets the cookies' Secure flag. */}}
{{- define "ap.consoleUrl" -}}
{{- if .Values.console.publicUrl -}}
{{- .Values.console.publicUrl -}}
{{- else if .Values.ingress.enabled -}}
{{- printf "%s://%s/console" (include "ap.publicScheme" .) .Values.ingress.host -}}
{{- else -}}
http://localhost:8088/console
{{- end -}}
{{- end -}}

{{- define "ap.publicAcceptUrl" -}}
{{- if .Values.provisioning.publicAcceptUrl -}}
{{- .Values.provisioning.publicAcceptUrl -}}
{{- else if .Values.ingress.enabled -}}
{{- printf "%s://%s/accept" (include "ap.publicScheme" .) .Values.ingress.host -}}
{{- else -}}
http://localhost:8084/accept
{{- end -}}
{{- end -}}

{{/*
The gateway's connection limits (libs/platform/src/http/NodeServer.ts), from gateway.http when the
values have it: the keep-alive must outlast the ingress's upstream keep-alive (ingress-nginx: 60 s),
or the ingress reuses connections the gateway has closed and clients see 502s.
*/}}
{{- define "ap.gatewayHttpEnv" -}}
{{- $http := dig "gateway" "http" (dict) .Values.AsMap -}}
- name: HTTP_KEEP_ALIVE_TIMEOUT
  value: {{ dig "keepAliveTimeout" "75 seconds" $http | quote }}
- name: HTTP_HEADERS_TIMEOUT
  value: {{ dig "headersTimeout" "10 seconds" $http | quote }}
- name: HTTP_REQUEST_TIMEOUT
  value: {{ dig "requestTimeout" "20 seconds" $http | quote }}
- name: MAX_CONNECTIONS_PER_CLIENT
  value: {{ dig "maxConnectionsPerClient" 256 $http | quote }}
{{- end -}}

{{/* The image: by digest when one is given (the tag stays, for people to read). */}}
{{- define "ap.image" -}}
{{- $image := .Values.image -}}
{{- $tag := $image.tag | default .Chart.AppVersion -}}
{{- if $image.digest -}}
{{- printf "%s:%s@%s" $image.repository $tag $image.digest -}}
{{- else -}}
{{- printf "%s:%s" $image.repository $tag -}}
{{- end -}}
{{- end -}}

{{- define "ap.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- .Values.serviceAccount.name | default (include "ap.fullname" .) -}}
{{- else -}}
{{- .Values.serviceAccount.name | default "default" -}}
{{- end -}}
{{- end -}}

{{/* The chart's own Secret: INTERNAL_SECRET and OAUTH_SIGNING_KEYS when generated, DATABASE_URL, SMTP_URL and NATS credentials when given as values. */}}
{{- define "ap.secretName" -}}
{{- include "ap.fullname" . -}}
{{- end -}}

{{/*
The copy of that Secret the migration Job reads: hooks run before the release's own objects exist
(pre-install) or change (pre-upgrade), so the Job cannot read the Secret the Deployments read.
*/}}
{{- define "ap.hookSecretName" -}}
{{- printf "%s-migrations" (include "ap.fullname" . | trunc 52 | trimSuffix "-") -}}
{{- end -}}

{{/*
The data of the chart's Secret, as JSON. A generated INTERNAL_SECRET is read back from the Secret
in the cluster (`lookup`), so that upgrades keep it: a new one would invalidate every assertion in
flight. It is computed once per render and kept on the root context, so that the Secret, its copy
for the migration Job and the pods' checksum annotation agree even on a first install, where a new
secret is drawn. Under `helm template` lookup finds nothing and every render draws a new one: give
internalSecret.existingSecret to a GitOps tool (README).
*/}}
{{- define "ap.secretData" -}}
{{- if not (hasKey . "apSecretData") -}}
{{- $data := dict -}}
{{- if not .Values.internalSecret.existingSecret -}}
{{- $existing := lookup "v1" "Secret" .Release.Namespace (include "ap.secretName" .) -}}
{{- $previous := "" -}}
{{- if and $existing $existing.data -}}
{{- $previous = get $existing.data "internal-secret" -}}
{{- end -}}
{{- $_ := set $data "internal-secret" ($previous | default (randAlphaNum 48 | b64enc)) -}}
{{- end -}}
{{- if not .Values.oauthSigningKeys.existingSecret -}}
{{- /* Kept like INTERNAL_SECRET: a new key at each upgrade would refuse every partner token in flight. */ -}}
{{- $existing := lookup "v1" "Secret" .Release.Namespace (include "ap.secretName" .) -}}
{{- $kept := "" -}}
{{- if and $existing $existing.data -}}
{{- $kept = get $existing.data "oauth-signing-keys" -}}
{{- end -}}
{{- $generated := list (dict "kid" (printf "chart-%s" (randAlphaNum 12 | lower)) "pem" (genPrivateKey "ecdsa")) | toJson -}}
{{- $_ := set $data "oauth-signing-keys" ($kept | default ($generated | b64enc)) -}}
{{- end -}}
{{- if not .Values.database.existingSecret -}}
{{- $_ := set $data "database-url" (required "database.url or database.existingSecret is required" .Values.database.url | b64enc) -}}
{{- end -}}
{{- if and .Values.provisioning.smtp.url (not .Values.provisioning.smtp.existingSecret) (ne .Values.provisioning.mailTransport "local") -}}
{{- $_ := set $data "smtp-url" (.Values.provisioning.smtp.url | b64enc) -}}
{{- end -}}
{{- if ne .Values.nats.auth.method "none" -}}
{{- range $component := include "ap.services" . | fromJsonArray -}}
{{- if include "ap.usesNats" $component -}}
{{- $identity := get $.Values.nats.auth (include "ap.valuesKey" $component) -}}
{{- if and $identity.value (not $identity.existingSecret) -}}
{{- $_ := set $data (printf "nats-%s-credential" $component) ($identity.value | b64enc) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $_ := set . "apSecretData" ($data | toJson) -}}
{{- end -}}
{{- get . "apSecretData" -}}
{{- end -}}

{{/* The services this release runs, as a JSON list. */}}
{{- define "ap.services" -}}
{{- $services := list "gateway" "referential" "provisioning" -}}
{{- if .Values.webhookDispatcher.enabled -}}
{{- $services = append $services "webhook-dispatcher" -}}
{{- end -}}
{{- if .Values.console.enabled -}}
{{- $services = append $services "console" -}}
{{- end -}}
{{- $services | toJson -}}
{{- end -}}

{{- define "ap.secretRef" -}}
valueFrom:
  secretKeyRef:
    name: {{ .name }}
    key: {{ .key }}
{{- end -}}

{{/*
Environment shared by every service: (dict "root" $ "component" "gateway" "secretName" <optional>).
secretName replaces the chart's Secret (the migration Job reads its own copy).
*/}}
{{- define "ap.commonEnv" -}}
{{- $root := .root -}}
{{- $secretName := .secretName | default (include "ap.secretName" $root) -}}
{{- $ports := include "ap.ports" .component | fromJsonArray -}}
{{- if index $ports 0 -}}
- name: PORT
  value: {{ index $ports 0 | quote }}
{{ end -}}
- name: ADMIN_PORT
  value: {{ index $ports 1 | quote }}
- name: HOST
  value: "0.0.0.0"
- name: DATABASE_URL
  {{- if $root.Values.database.existingSecret }}
  {{- include "ap.secretRef" (dict "name" $root.Values.database.existingSecret "key" $root.Values.database.existingSecretKey) | nindent 2 }}
  {{- else }}
  {{- include "ap.secretRef" (dict "name" $secretName "key" "database-url") | nindent 2 }}
  {{- end }}
- name: DATABASE_POOL_SIZE
  value: {{ $root.Values.database.poolSize | quote }}
- name: INTERNAL_SECRET
  {{- include "ap.internalSecretRef" (dict "root" $root "secretName" $secretName) | nindent 2 }}
{{- with $root.Values.internalSecret.previous }}
{{- if .existingSecret }}
- name: INTERNAL_SECRET_PREVIOUS
  {{- include "ap.secretRef" (dict "name" .existingSecret "key" .existingSecretKey) | nindent 2 }}
{{- end }}
{{- end }}
{{- if include "ap.usesNats" .component }}
- name: NATS_URL
  {{- if $root.Values.nats.bundled.enabled }}
  value: {{ printf "nats://%s:4222" (include "ap.componentName" (dict "root" $root "component" "nats")) | quote }}
  {{- else if $root.Values.nats.existingSecret }}
  {{- include "ap.secretRef" (dict "name" $root.Values.nats.existingSecret "key" $root.Values.nats.existingSecretKey) | nindent 2 }}
  {{- else }}
  value: {{ $root.Values.nats.url | quote }}
  {{- end }}
{{- if and $root.Values.nats.bundled.enabled (gt (int $root.Values.nats.replicas) 1) }}
{{- fail "nats.replicas must be 1 with nats.bundled.enabled: the bundled NATS is one server" }}
{{- end }}
- name: NATS_REPLICAS
  value: {{ $root.Values.nats.replicas | quote }}
{{- end }}
{{- include "ap.natsEnv" . }}
- name: ERRORS_URL
  value: {{ $root.Values.errorsUrl | quote }}
- name: LOG_LEVEL
  {{- $own := get $root.Values (include "ap.valuesKey" .component) | default dict }}
  value: {{ (kindIs "map" $own | ternary $own dict).logLevel | default $root.Values.log.level | quote }}
- name: LOG_FORMAT
  value: {{ $root.Values.log.format | quote }}
{{- /* Every kind to every service: each reads those of the tables it keeps. */}}
{{- with $root.Values.retention }}
- name: RETENTION_DELIVERIES
  value: {{ .deliveries | quote }}
- name: RETENTION_SECURITY_LOG
  value: {{ .securityLog | quote }}
- name: RETENTION_OUTBOX
  value: {{ .outbox | quote }}
- name: RETENTION_PAT_REQUESTS
  value: {{ .patRequests | quote }}
- name: RETENTION_INTERVAL
  value: {{ .interval | quote }}
{{- end }}
{{- if eq .component "gateway" }}
{{ include "ap.gatewayHttpEnv" $root }}
{{- end }}
{{- with $root.Values.telemetry.otlpEndpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ . | quote }}
{{- end }}
{{- /* Written with or without a collector: a wrong one stops the service now, not the day export is turned on. */}}
- name: OTEL_TRACES_SAMPLER
  value: {{ $root.Values.telemetry.tracesSampler | quote }}
- name: OTEL_TRACES_SAMPLER_ARG
  value: {{ $root.Values.telemetry.tracesSamplerArg | toString | quote }}
{{- end -}}

{{- define "ap.internalSecretRef" -}}
{{- if .root.Values.internalSecret.existingSecret -}}
{{- include "ap.secretRef" (dict "name" .root.Values.internalSecret.existingSecret "key" .root.Values.internalSecret.existingSecretKey) -}}
{{- else -}}
{{- include "ap.secretRef" (dict "name" (.secretName | default (include "ap.secretName" .root)) "key" "internal-secret") -}}
{{- end -}}
{{- end -}}

{{/* The environment of a service's container: (dict "root" $ "component" ... "migrations" "run|only|skip" "secretName" <optional>). */}}
{{- define "ap.serviceEnv" -}}
{{- $root := .root -}}
{{- $values := get $root.Values (include "ap.valuesKey" .component) -}}
{{- include "ap.commonEnv" . }}
{{- $own := include (printf "ap.%sEnv" (include "ap.valuesKey" .component)) (dict "root" $root "secretName" .secretName) }}
{{- with $own }}
{{ . }}
{{- end }}
- name: MIGRATIONS
  value: {{ .migrations | quote }}
{{- if eq .migrations "skip" }}
- name: MIGRATIONS_WAIT_TIMEOUT
  value: {{ $root.Values.migrations.waitTimeout | quote }}
{{- end }}
{{- with concat ($root.Values.extraEnv | default list) ($values.extraEnv | default list) }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* What MIGRATIONS the Deployments run with: the Job migrates, or each service does. */}}
{{- define "ap.migrationsMode" -}}
{{- if .Values.migrations.enabled }}skip{{ else }}run{{ end -}}
{{- end -}}

{{/*
Labels of a pod: the chart's, the caller's extra ones (the operator label), the component's
podLabels and the chart-wide podLabels; the chart's win, so that no value can break a selector.
(dict "root" $ "component" ... "values" <component values> "extra" <labels>)
*/}}
{{- define "ap.podLabels" -}}
{{- $chart := include "ap.labels" (dict "root" .root "component" .component) | fromYaml -}}
{{- $values := .values | default dict -}}
{{- toYaml (merge $chart (.extra | default dict) ($values.podLabels | default dict) (.root.Values.podLabels | default dict)) -}}
{{- end -}}

{{/*
Annotations of a pod; those that read the chart's Secret carry its checksum, so that a change of
the Secret rolls them (env variables are read once, at start).
*/}}
{{- define "ap.podAnnotations" -}}
{{- $values := .values | default dict -}}
{{- $own := dict -}}
{{- if .readsSecret -}}
{{- $data := include "ap.secretData" .root -}}
{{- if ne $data "{}" -}}
{{- $_ := set $own "checksum/secret" ($data | sha256sum) -}}
{{- end -}}
{{- end -}}
{{- $annotations := merge $own ($values.podAnnotations | default dict) (.root.Values.podAnnotations | default dict) -}}
{{- with $annotations -}}
{{- toYaml . -}}
{{- end -}}
{{- end -}}

{{/* The operator label of the pods that call the admin ports (networkPolicy.operators.podLabels). */}}
{{- define "ap.operatorLabels" -}}
{{- toYaml (.Values.networkPolicy.operators.podLabels | default (dict "architecture-portfolio/operator" "true")) -}}
{{- end -}}

{{/*
Pod-level settings of every pod of the chart: (dict "root" $ "component" ... "values" <component values>).
A component's nodeSelector, affinity, tolerations, topology spread and priority class replace the
chart-wide ones; a spread constraint without a labelSelector spreads the component's own pods.
*/}}
{{- define "ap.podSpec" -}}
{{- $root := .root -}}
{{- $values := .values | default dict -}}
{{- $forJob := .forJob -}}
{{- if $values.serviceAccountName }}
serviceAccountName: {{ $values.serviceAccountName }}
{{- else if or (not $forJob) (not $root.Values.serviceAccount.create) }}
serviceAccountName: {{ include "ap.serviceAccountName" $root }}
{{- end }}
automountServiceAccountToken: false
enableServiceLinks: false
{{- with $values.imagePullSecrets | default $root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml $root.Values.podSecurityContext | nindent 2 }}
{{- with $values.priorityClassName | default $root.Values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with $values.nodeSelector | default $root.Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $values.affinity | default $root.Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $values.tolerations | default $root.Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $values.topologySpreadConstraints | default $root.Values.topologySpreadConstraints }}
{{- $selector := include "ap.selectorLabels" (dict "root" $root "component" $.component) | fromYaml }}
topologySpreadConstraints:
  {{- range . }}
  {{- $constraint := deepCopy . }}
  {{- if not (hasKey $constraint "labelSelector") }}
  {{- $_ := set $constraint "labelSelector" (dict "matchLabels" $selector) }}
  {{- end }}
  - {{- toYaml $constraint | nindent 4 }}
  {{- end }}
{{- end }}
{{- end -}}

{{- define "ap.containerSecurityContext" -}}
securityContext:
  {{- toYaml .Values.containerSecurityContext | nindent 2 }}
{{- end -}}

{{/*
A service's container, for its Deployment and for the migration Job:
(dict "root" $ "component" ... "migrations" <mode> "secretName" <optional> "volumeSuffix" <optional> "resources" <map> "serve" <bool>)
*/}}
{{- define "ap.serviceContainer" -}}
{{- $root := .root -}}
{{- $values := get $root.Values (include "ap.valuesKey" .component) -}}
{{- $ports := include "ap.ports" .component | fromJsonArray -}}
- name: {{ .component }}
  image: {{ include "ap.image" $root | quote }}
  imagePullPolicy: {{ $root.Values.image.pullPolicy }}
  command: ["node", "dist/{{ .component }}/main.mjs"]
  {{- if .serve }}
  ports:
    {{- if index $ports 0 }}
    - name: http
      containerPort: {{ index $ports 0 }}
      protocol: TCP
    {{- end }}
    - name: admin
      containerPort: {{ index $ports 1 }}
      protocol: TCP
  {{- end }}
  env:
    {{- include "ap.serviceEnv" . | nindent 4 }}
  {{- with concat ($root.Values.extraEnvFrom | default list) ($values.extraEnvFrom | default list) }}
  envFrom:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- if .serve }}
  # Probes on the admin port, of every service alike: the gateway's public port serves none
  # (anyone could make it query the database). The startup probe's 120 s cover the wait for
  # the migration Job (migrations.waitTimeout), after which the service stops and says why.
  startupProbe:
    httpGet:
      path: /healthz
      port: admin
    periodSeconds: 2
    failureThreshold: 60
  livenessProbe:
    httpGet:
      path: /healthz
      port: admin
    periodSeconds: 10
    timeoutSeconds: 3
    failureThreshold: 3
  readinessProbe:
    httpGet:
      path: /readyz
      port: admin
    periodSeconds: 5
    timeoutSeconds: 3
    failureThreshold: 2
  {{- end }}
  resources:
    {{- toYaml .resources | nindent 4 }}
  {{- include "ap.containerSecurityContext" $root | nindent 2 }}
  volumeMounts:
    # The root file system is read-only; node and the libraries get a writable temporary directory.
    - name: tmp
      mountPath: /tmp
    {{- with include "ap.natsVolumeMounts" . | trim }}
    {{- . | nindent 4 }}
    {{- end }}
    {{- with concat ($root.Values.extraVolumeMounts | default list) ($values.extraVolumeMounts | default list) }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- end -}}

{{/* The volumes of a service's pod: (dict "root" $ "component" ... "secretName" <optional> "volumeSuffix" <optional>) */}}
{{- define "ap.serviceVolumes" -}}
{{- $values := get .root.Values (include "ap.valuesKey" .component) -}}
- name: tmp
  emptyDir:
    sizeLimit: 64Mi
{{- with include "ap.natsVolumes" . | trim }}
{{ . }}
{{- end }}
{{- with concat (.root.Values.extraVolumes | default list) ($values.extraVolumes | default list) }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The pod template of a service's Deployment: (dict "root" $ "component" "gateway") */}}
{{- define "ap.podTemplate" -}}
{{- $root := .root -}}
{{- $values := get $root.Values (include "ap.valuesKey" .component) -}}
metadata:
  labels:
    {{- include "ap.podLabels" (dict "root" $root "component" .component "values" $values) | nindent 4 }}
  {{- with include "ap.podAnnotations" (dict "root" $root "values" $values "readsSecret" true) }}
  annotations:
    {{- . | nindent 4 }}
  {{- end }}
spec:
  {{- include "ap.podSpec" (dict "root" $root "component" .component "values" $values) | nindent 2 }}
  # SIGTERM stops accepting, drains in-flight requests and closes the pools well within this.
  terminationGracePeriodSeconds: 30
  containers:
    {{- include "ap.serviceContainer" (dict "root" $root "component" .component "migrations" (include "ap.migrationsMode" $root) "resources" $values.resources "serve" true) | nindent 4 }}
  volumes:
    {{- include "ap.serviceVolumes" (dict "root" $root "component" .component) | nindent 4 }}
{{- end -}}

{{/* The admin URL of a service's admin API: (dict "root" $ "component" "gateway"). */}}
{{- define "ap.adminUrl" -}}
{{- printf "http://%s:%v" (include "ap.componentName" (dict "root" .root "component" .component "suffix" "admin")) (index (include "ap.ports" .component | fromJsonArray) 1) -}}
{{- end -}}

{{/*
The admin URLs and secret of the `portfolio` CLI, for the pods that run it (the console's for
`portfolio audit`).
*/}}
{{- define "ap.cliEnv" -}}
{{- $variables := dict "gateway" "GATEWAY_ADMIN_URL" "referential" "REFERENTIAL_ADMIN_URL" "provisioning" "PROVISIONING_ADMIN_URL" "webhook-dispatcher" "WEBHOOK_ADMIN_URL" "console" "CONSOLE_ADMIN_URL" -}}
- name: INTERNAL_SECRET
  {{- include "ap.internalSecretRef" (dict "root" .) | nindent 2 }}
{{- range $component := include "ap.services" . | fromJsonArray }}
{{- with get $variables $component }}
- name: {{ . }}
  value: {{ include "ap.adminUrl" (dict "root" $ "component" $component) | quote }}
{{- end }}
{{- end }}
{{- end -}}

{{/* A PodDisruptionBudget is useful only when more than one pod may run. */}}
{{- define "ap.multiReplica" -}}
{{- $values := get .root.Values (include "ap.valuesKey" .component) -}}
{{- $autoscaling := $values.autoscaling | default dict -}}
{{- if $autoscaling.enabled -}}
{{- if gt (int $autoscaling.minReplicas) 1 }}true{{ end -}}
{{- else if gt (int $values.replicas) 1 -}}
true
{{- end -}}
{{- end -}}

{{/* Labels as k=v, k=v (NOTES.txt). */}}
{{- define "ap.labelList" -}}
{{- $pairs := list -}}
{{- range $key, $value := . -}}
{{- $pairs = append $pairs (printf "%s=%s" $key $value) -}}
{{- end -}}
{{- join ", " $pairs -}}
{{- end -}}
