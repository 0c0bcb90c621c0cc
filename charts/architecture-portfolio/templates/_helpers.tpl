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
Public and admin container ports of each service: the services' own defaults (libs/platform/src/Ports.ts).
A public port of 0: the service has none (the webhook dispatcher serves its admin API only).
*/}}
{{- define "ap.ports" -}}
{{- $ports := dict "gateway" (list 8080 8081) "referential" (list 8082 8083) "provisioning" (list 8084 8085) "webhook-dispatcher" (list 0 8087) -}}
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

{{- define "ap.publicAcceptUrl" -}}
{{- if .Values.provisioning.publicAcceptUrl -}}
{{- .Values.provisioning.publicAcceptUrl -}}
{{- else if .Values.ingress.enabled -}}
{{- printf "%s://%s/accept" (include "ap.publicScheme" .) .Values.ingress.host -}}
{{- else -}}
http://localhost:8084/accept
{{- end -}}
{{- end -}}

{{/* The chart's own Secret: INTERNAL_SECRET when generated, DATABASE_URL, SMTP_URL and NATS credentials when given as values. */}}
{{- define "ap.secretName" -}}
{{- include "ap.fullname" . -}}
{{- end -}}

{{- define "ap.secretRef" -}}
valueFrom:
  secretKeyRef:
    name: {{ .name }}
    key: {{ .key }}
{{- end -}}

{{/*
The gateway's connection limits (libs/platform/src/NodeServer.ts), from gateway.http when the
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

{{/* Environment shared by every service. */}}
{{- define "ap.commonEnv" -}}
{{- $root := .root -}}
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
  {{- include "ap.secretRef" (dict "name" (include "ap.secretName" $root) "key" "database-url") | nindent 2 }}
  {{- end }}
- name: DATABASE_POOL_SIZE
  value: {{ $root.Values.database.poolSize | quote }}
- name: INTERNAL_SECRET
  {{- if $root.Values.internalSecret.existingSecret }}
  {{- include "ap.secretRef" (dict "name" $root.Values.internalSecret.existingSecret "key" $root.Values.internalSecret.existingSecretKey) | nindent 2 }}
  {{- else }}
  {{- include "ap.secretRef" (dict "name" (include "ap.secretName" $root) "key" "internal-secret") | nindent 2 }}
  {{- end }}
{{- with $root.Values.internalSecret.previous }}
{{- if .existingSecret }}
- name: INTERNAL_SECRET_PREVIOUS
  {{- include "ap.secretRef" (dict "name" .existingSecret "key" .existingSecretKey) | nindent 2 }}
{{- end }}
{{- end }}
- name: NATS_URL
  value: {{ $root.Values.nats.url | quote }}
{{- include "ap.natsEnv" . }}
- name: ERRORS_URL
  value: {{ $root.Values.errorsUrl | quote }}
- name: LOG_LEVEL
  value: {{ $root.Values.log.level | quote }}
- name: LOG_FORMAT
  value: {{ $root.Values.log.format | quote }}
{{- if eq .component "gateway" }}
{{ include "ap.gatewayHttpEnv" $root }}
{{- end }}
{{- with $root.Values.telemetry.otlpEndpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ . | quote }}
{{- end }}
{{- end -}}

{{/* Pod spec shared by the Deployments: (dict "root" $ "component" "gateway" "env" <extra env yaml> "resources" <map>) */}}
{{- define "ap.podTemplate" -}}
{{- $root := .root -}}
{{- $ports := include "ap.ports" .component | fromJsonArray -}}
metadata:
  labels:
    {{- include "ap.labels" . | nindent 4 }}
  {{- with $root.Values.podAnnotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  automountServiceAccountToken: false
  enableServiceLinks: false
  {{- with $root.Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  securityContext:
    runAsNonRoot: true
    runAsUser: 1000
    runAsGroup: 1000
    fsGroup: 1000
    seccompProfile:
      type: RuntimeDefault
  # SIGTERM stops accepting, drains in-flight requests and closes the pools well within this.
  terminationGracePeriodSeconds: 30
  containers:
    - name: {{ .component }}
      image: "{{ $root.Values.image.repository }}:{{ $root.Values.image.tag | default $root.Chart.AppVersion }}"
      imagePullPolicy: {{ $root.Values.image.pullPolicy }}
      args: ["services/{{ .component }}/src/main.ts"]
      ports:
        {{- if index $ports 0 }}
        - name: http
          containerPort: {{ index $ports 0 }}
          protocol: TCP
        {{- end }}
        - name: admin
          containerPort: {{ index $ports 1 }}
          protocol: TCP
      env:
        {{- include "ap.commonEnv" . | nindent 8 }}
        {{- .env | nindent 8 }}
      # Probes on the admin port, of every service alike: the gateway's public port serves none
      # (anyone could make it query the database). tsx compiles the sources at start: give it
      # time before liveness counts.
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
      resources:
        {{- toYaml .resources | nindent 8 }}
      securityContext:
        runAsNonRoot: true
        allowPrivilegeEscalation: false
        readOnlyRootFilesystem: true
        privileged: false
        capabilities:
          drop: ["ALL"]
      volumeMounts:
        # tsx keeps its compile cache under the temporary directory.
        - name: tmp
          mountPath: /tmp
        {{- with include "ap.natsVolumeMounts" . | trim }}
        {{- . | nindent 8 }}
        {{- end }}
  volumes:
    - name: tmp
      emptyDir:
        sizeLimit: 256Mi
    {{- with include "ap.natsVolumes" . | trim }}
    {{- . | nindent 4 }}
    {{- end }}
  {{- with $root.Values.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $root.Values.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}
