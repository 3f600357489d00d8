{{- define "cks.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* <release>-<name>, or just the release name when it already contains the name (release "cks-node-operator" gives "cks-node-operator"). */}}
{{- define "cks.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 52 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "cks.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 52 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 52 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "cks.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "cks.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "cks.labels" -}}
app.kubernetes.io/name: {{ include "cks.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end -}}

{{- define "cks.selectorLabels" -}}
app.kubernetes.io/name: {{ include "cks.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* The sha256 of every script in upgrade.scripts, comma-separated: the operator runs no other. */}}
{{- define "cks.scriptDigests" -}}
{{- $digests := list -}}
{{- range $key, $script := .Values.upgrade.scripts -}}
{{- $digests = append $digests (sha256sum $script) -}}
{{- end -}}
{{- join "," $digests -}}
{{- end -}}

{{/* The names of the imagePullSecrets ({name: ...} each), comma-separated: the upgrade Jobs pull with them too. */}}
{{- define "cks.pullSecretNames" -}}
{{- $names := list -}}
{{- range . -}}
{{- $names = append $names .name -}}
{{- end -}}
{{- join "," $names -}}
{{- end -}}
