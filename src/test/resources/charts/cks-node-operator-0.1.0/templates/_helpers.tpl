{{- define "cks.name" -}}cks-node-operator{{- end -}}
{{- define "cks.fullname" -}}{{ .Release.Name | trunc 40 | trimSuffix "-" }}-cks-node-operator{{- end -}}
{{- define "cks.labels" -}}
app.kubernetes.io/name: cks-node-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end -}}
{{- define "cks.selectorLabels" -}}
app.kubernetes.io/name: cks-node-operator
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
