{{/* NATS credentials and TLS files, for the components that speak to NATS. */}}

{{/*
Every service but the console speaks to NATS (each publishes its outbox), each with its own identity;
the console has no outbox and hears no event, so it is given neither NATS_URL nor a credential.
*/}}
{{- define "ap.usesNats" -}}
{{- if has . (list "gateway" "provisioning" "referential" "webhook-dispatcher") }}true{{ end -}}
{{- end -}}

{{/* Where the NATS credential of (dict "root" $ "component" "gateway") lives, as JSON {name, key}. */}}
{{- define "ap.natsCredentialRef" -}}
{{- $identity := get .root.Values.nats.auth (include "ap.valuesKey" .component) -}}
{{- if $identity.existingSecret -}}
{{- dict "name" $identity.existingSecret "key" $identity.existingSecretKey | toJson -}}
{{- else -}}
{{- dict "name" (.secretName | default (include "ap.secretName" .root)) "key" (printf "nats-%s-credential" .component) | toJson -}}
{{- end -}}
{{- end -}}

{{- define "ap.natsFilesDir" -}}/etc/portfolio/nats-auth{{- end -}}
{{- define "ap.natsTlsDir" -}}/etc/portfolio/nats-tls{{- end -}}

{{/* Environment of (dict "root" $ "component" ...): the variables of its NATS identity and of TLS. */}}
{{- define "ap.natsEnv" -}}
{{- if include "ap.usesNats" .component -}}
{{- $auth := .root.Values.nats.auth -}}
{{- $ref := include "ap.natsCredentialRef" . | fromJson -}}
{{- if eq $auth.method "userPassword" }}
- name: NATS_USER
  value: {{ (get $auth (include "ap.valuesKey" .component)).user | quote }}
- name: NATS_PASSWORD
  {{- include "ap.secretRef" $ref | nindent 2 }}
{{- else if eq $auth.method "token" }}
- name: NATS_TOKEN
  {{- include "ap.secretRef" $ref | nindent 2 }}
{{- else if eq $auth.method "creds" }}
- name: NATS_CREDS_FILE
  value: "{{ include "ap.natsFilesDir" . }}/credential"
{{- else if eq $auth.method "nkey" }}
- name: NATS_NKEY_SEED_FILE
  value: "{{ include "ap.natsFilesDir" . }}/credential"
{{- end }}
{{- with .root.Values.nats.tls }}
{{- if .existingSecret }}
- name: NATS_TLS_CA_FILE
  value: "{{ include "ap.natsTlsDir" . }}/ca.crt"
{{- if .certKey }}
- name: NATS_TLS_CERT_FILE
  value: "{{ include "ap.natsTlsDir" . }}/tls.crt"
- name: NATS_TLS_KEY_FILE
  value: "{{ include "ap.natsTlsDir" . }}/tls.key"
{{- end }}
{{- end }}
{{- end }}
{{- end -}}
{{- end -}}

{{/*
The Secret volumes holding a .creds or seed file and the TLS files; 288 is mode 0440 (group: fsGroup).
The migration Job runs every service in one pod: "volumeSuffix" keeps each service's credential apart.
*/}}
{{- define "ap.natsVolumes" -}}
{{- $suffix := .volumeSuffix | default "" -}}
{{- if include "ap.usesNats" .component -}}
{{- if has .root.Values.nats.auth.method (list "creds" "nkey") }}
{{- $ref := include "ap.natsCredentialRef" . | fromJson }}
- name: nats-auth{{ $suffix }}
  secret:
    secretName: {{ $ref.name }}
    defaultMode: 288
    items:
      - key: {{ $ref.key }}
        path: credential
{{- end }}
{{- with .root.Values.nats.tls }}
{{- if .existingSecret }}
- name: nats-tls{{ $suffix }}
  secret:
    secretName: {{ .existingSecret }}
    defaultMode: 288
    items:
      - key: {{ .caKey }}
        path: ca.crt
      {{- if .certKey }}
      - key: {{ .certKey }}
        path: tls.crt
      - key: {{ .keyKey }}
        path: tls.key
      {{- end }}
{{- end }}
{{- end }}
{{- end -}}
{{- end -}}

{{- define "ap.natsVolumeMounts" -}}
{{- $suffix := .volumeSuffix | default "" -}}
{{- if include "ap.usesNats" .component -}}
{{- if has .root.Values.nats.auth.method (list "creds" "nkey") }}
- name: nats-auth{{ $suffix }}
  mountPath: {{ include "ap.natsFilesDir" . }}
  readOnly: true
{{- end }}
{{- if .root.Values.nats.tls.existingSecret }}
- name: nats-tls{{ $suffix }}
  mountPath: {{ include "ap.natsTlsDir" . }}
  readOnly: true
{{- end }}
{{- end -}}
{{- end -}}
