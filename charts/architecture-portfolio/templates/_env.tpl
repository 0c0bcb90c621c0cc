{{/* Environment of each service beyond ap.commonEnv: (dict "root" $ "secretName" <the chart's Secret or the Job's copy>). */}}

{{- define "ap.gatewayEnv" -}}
{{- $secretName := .secretName | default (include "ap.secretName" .root) -}}
{{- with .root -}}
- name: OAUTH_SIGNING_KEYS
  {{- if .Values.oauthSigningKeys.existingSecret }}
  {{- include "ap.secretRef" (dict "name" .Values.oauthSigningKeys.existingSecret "key" .Values.oauthSigningKeys.existingSecretKey) | nindent 2 }}
  {{- else }}
  {{- include "ap.secretRef" (dict "name" $secretName "key" "oauth-signing-keys") | nindent 2 }}
  {{- end }}
- name: PUBLIC_BASE_URL
  value: {{ include "ap.publicBaseUrl" . | quote }}
- name: REFERENTIAL_URL
  value: {{ printf "http://%s:%v" (include "ap.componentName" (dict "root" . "component" "referential")) (index (include "ap.ports" "referential" | fromJsonArray) 0) | quote }}
- name: PROVISIONING_URL
  value: {{ printf "http://%s:%v" (include "ap.componentName" (dict "root" . "component" "provisioning")) (index (include "ap.ports" "provisioning" | fromJsonArray) 0) | quote }}
{{- /* An approval of a PAT request reads the requester's membership there again; the NetworkPolicies let it. */}}
- name: PROVISIONING_ADMIN_URL
  value: {{ include "ap.adminUrl" (dict "root" . "component" "provisioning") | quote }}
- name: RATE_LIMIT_PER_MINUTE
  value: {{ .Values.gateway.rateLimit.perMinute | quote }}
- name: UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE
  value: {{ .Values.gateway.rateLimit.unauthenticatedPerMinute | quote }}
- name: PARTNER_RATE_LIMIT_PER_MINUTE
  value: {{ .Values.gateway.rateLimit.partnerPerMinute | quote }}
- name: SCIM_RATE_LIMIT_PER_MINUTE
  value: {{ .Values.gateway.rateLimit.scimPerMinute | quote }}
{{- /* While NATS is away each pod admits its share of the limit: with an autoscaler, the share of its largest size. */}}
- name: GATEWAY_REPLICAS
  value: {{ .Values.gateway.rateLimit.degradedReplicas | default (ternary .Values.gateway.autoscaling.maxReplicas .Values.gateway.replicas .Values.gateway.autoscaling.enabled) | quote }}
- name: TRUSTED_PROXY_HOPS
  value: {{ .Values.gateway.trustedProxyHops | quote }}
- name: UPSTREAM_TIMEOUT
  value: {{ .Values.gateway.upstreamTimeout | quote }}
{{- /* The image's jemalloc settings with freed pages given back after 100 ms, not a second: the 64 KiB buffer of each socket read of a proxied answer otherwise stays resident (docs/architecture.md, "Memory"). */}}
- name: MALLOC_CONF
  value: "background_thread:true,narenas:2,dirty_decay_ms:100,muzzy_decay_ms:0"
{{- end }}
{{- end -}}

{{- define "ap.referentialEnv" -}}
- name: REFERENTIAL_READ_CACHE_MB
  value: {{ .root.Values.referential.readCacheMb | quote }}
{{- end -}}

{{- define "ap.provisioningEnv" -}}
{{- $secretName := .secretName | default (include "ap.secretName" .root) -}}
{{- with .root -}}
- name: PUBLIC_ACCEPT_URL
  value: {{ include "ap.publicAcceptUrl" . | quote }}
{{- /* SCIM answers name each User by its absolute URI under the public API. */}}
- name: PUBLIC_BASE_URL
  value: {{ include "ap.publicBaseUrl" . | quote }}
{{- /* Where identity providers send the browser back after a single sign-on: the console's address. */}}
- name: CONSOLE_URL
  value: {{ include "ap.consoleUrl" . | quote }}
- name: INVITATIONS_PER_TENANT_PER_HOUR
  value: {{ .Values.provisioning.invitationsPerTenantPerHour | quote }}
- name: TRUSTED_PROXY_HOPS
  value: {{ .Values.provisioning.trustedProxyHops | quote }}
{{- with .Values.provisioning.mailFrom }}
- name: MAIL_FROM
  value: {{ . | quote }}
{{- end }}
- name: MAIL_TRANSPORT
  value: {{ .Values.provisioning.mailTransport | quote }}
{{- if eq .Values.provisioning.mailTransport "local" }}
{{- /* provisioning refuses MAIL_TRANSPORT=local beside an SMTP_URL: local means no SMTP at all. */}}
{{- else if .Values.provisioning.smtp.existingSecret }}
- name: SMTP_URL
  {{- include "ap.secretRef" (dict "name" .Values.provisioning.smtp.existingSecret "key" .Values.provisioning.smtp.existingSecretKey) | nindent 2 }}
{{- else if .Values.provisioning.smtp.url }}
- name: SMTP_URL
  {{- include "ap.secretRef" (dict "name" $secretName "key" "smtp-url") | nindent 2 }}
{{- end }}
{{- end }}
{{- end -}}

{{- define "ap.webhookDispatcherEnv" -}}
{{- with .root.Values.webhookDispatcher -}}
- name: WEBHOOK_RETRY_SCHEDULE
  value: {{ .retrySchedule | quote }}
- name: WEBHOOK_DISABLE_AFTER_FAILURES
  value: {{ .disableAfterFailures | quote }}
- name: WEBHOOK_TIMEOUT
  value: {{ .timeout | quote }}
{{- /* Always written, so that the pod says what it does; the NetworkPolicy refuses private ranges on its own (egress.allowPrivateTargets). */}}
- name: WEBHOOK_ALLOW_PRIVATE_TARGETS
  value: {{ ternary "true" "false" .allowPrivateTargets | quote }}
- name: WEBHOOK_CONCURRENCY
  value: {{ .concurrency | quote }}
{{- end }}
{{- end -}}


{{- define "ap.consoleEnv" -}}
{{- with .root -}}
- name: CONSOLE_URL
  value: {{ include "ap.consoleUrl" . | quote }}
- name: PUBLIC_BASE_URL
  value: {{ include "ap.publicBaseUrl" . | quote }}
{{- /* It calls them for the member signed in, with assertions naming them; the NetworkPolicies let it. */}}
- name: GATEWAY_ADMIN_URL
  value: {{ include "ap.adminUrl" (dict "root" . "component" "gateway") | quote }}
- name: PROVISIONING_ADMIN_URL
  value: {{ include "ap.adminUrl" (dict "root" . "component" "provisioning") | quote }}
{{- if .Values.webhookDispatcher.enabled }}
- name: WEBHOOK_ADMIN_URL
  value: {{ include "ap.adminUrl" (dict "root" . "component" "webhook-dispatcher") | quote }}
{{- end }}
- name: TRUSTED_PROXY_HOPS
  value: {{ .Values.console.trustedProxyHops | quote }}
- name: CONSOLE_SESSION_HOURS
  value: {{ .Values.console.session.hours | quote }}
- name: CONSOLE_SESSION_IDLE_MINUTES
  value: {{ .Values.console.session.idleMinutes | quote }}
- name: CONSOLE_SIGN_IN_MAX_FAILURES
  value: {{ .Values.console.signIn.maxFailures | quote }}
- name: CONSOLE_SIGN_IN_MAX_FAILURES_PER_ADDRESS
  value: {{ .Values.console.signIn.maxFailuresPerAddress | quote }}
- name: CONSOLE_LOCKOUT_MINUTES
  value: {{ .Values.console.signIn.lockoutMinutes | quote }}
{{- end }}
{{- end -}}
