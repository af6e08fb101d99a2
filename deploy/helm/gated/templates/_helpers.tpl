{{/* Chart name, truncated to the 63 characters a label value allows. */}}
{{- define "gated.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Fully qualified app name; the release name alone when it already holds the chart name. */}}
{{- define "gated.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "gated.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gated.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "gated.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "gated.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "gated.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "gated.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "gated.secretName" -}}
{{- default (include "gated.fullname" .) .Values.secrets.existingSecret }}
{{- end }}

{{- define "gated.catalogConfigMap" -}}
{{- default (printf "%s-catalog" (include "gated.fullname" .)) .Values.catalog.existingConfigMap }}
{{- end }}

{{- define "gated.policyConfigMap" -}}
{{- default (printf "%s-policy" (include "gated.fullname" .)) .Values.policy.existingConfigMap }}
{{- end }}

{{- define "gated.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* The database URL from the Secret; shared by the server and the migration Job. */}}
{{- define "gated.databaseURLEnv" -}}
- name: GATED_DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "gated.secretName" . }}
      key: {{ .Values.secrets.keys.databaseURL }}
{{- end }}

{{/*
GATED_REDIS_URL from redis.existingSecret, or from the chart's Secret when
redis.url is set; nothing without either. The URL may hold a password, so
it is never an argument.
*/}}
{{- define "gated.redisURLEnv" -}}
{{- if .Values.redis.existingSecret -}}
- name: GATED_REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.redis.existingSecret }}
      key: {{ .Values.redis.secretKey }}
{{- else if .Values.redis.url -}}
{{- if .Values.secrets.existingSecret -}}
{{- fail "redis.url is kept in the chart's Secret, which secrets.existingSecret replaces: put the URL in a Secret and set redis.existingSecret" -}}
{{- end -}}
- name: GATED_REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "gated.secretName" . }}
      key: {{ .Values.redis.secretKey }}
{{- end -}}
{{- end }}
