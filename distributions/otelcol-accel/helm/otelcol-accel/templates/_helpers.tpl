{{/* Names: with the release called otelcol-accel the objects are named as in the kustomize base. */}}
{{- define "otelcol-accel.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "otelcol-accel.labels" -}}
app.kubernetes.io/part-of: otelcol-accel
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "otelcol-accel.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "otelcol-accel.agentImage" -}}
{{ .Values.agentImage.repository }}:{{ .Values.agentImage.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "otelcol-accel.gatewayEndpoint" -}}
{{ include "otelcol-accel.fullname" . }}-gateway.{{ .Release.Namespace }}.svc:4317
{{- end -}}

{{/* The gateway's config files, in load order, by destination. */}}
{{- define "otelcol-accel.gatewayConfigs" -}}
{{- $d := .Values.destination -}}
{{- $files := list -}}
{{- if eq $d "cloudwatch-emf" -}}{{- $files = list "cloudwatch-emf.yaml" -}}
{{- else if eq $d "cloudwatch-otlp" -}}{{- $files = list "cloudwatch-otlp.yaml" -}}
{{- else if eq $d "amp" -}}{{- $files = list "amp.yaml" -}}
{{- else if eq $d "prometheus" -}}{{- $files = list "gateway.yaml" -}}
{{- else if eq $d "otlp" -}}{{- $files = list "gateway.yaml" "otlp.yaml" -}}
{{- else -}}
{{- fail (printf "destination %q: use one of cloudwatch-emf, cloudwatch-otlp, amp, prometheus, otlp" $d) -}}
{{- end -}}
{{- if .Values.reliability.enabled -}}
{{- $files = append $files "k8s-reliability.yaml" -}}
{{- end -}}
{{- if .Values.remediation.enabled -}}
{{- $files = append $files "remediation.yaml" -}}
{{- end -}}
{{- if .Values.insights.enabled -}}
{{- $files = append $files "insights.yaml" -}}
{{- end -}}
{{- toJson $files -}}
{{- end -}}

{{/* Checks that fail the install with what to set. */}}
{{- define "otelcol-accel.validate" -}}
{{- $d := .Values.destination -}}
{{- if and (has $d (list "cloudwatch-emf" "cloudwatch-otlp" "amp")) (not .Values.region) -}}
{{- fail (printf "destination %s needs the AWS region: --set region=<region> (e.g. us-east-1)" $d) -}}
{{- end -}}
{{- if and (eq $d "amp") (not .Values.amp.remoteWriteURL) -}}
{{- fail "destination amp needs amp.remoteWriteURL: https://aps-workspaces.<region>.amazonaws.com/workspaces/<id>/api/v1/remote_write" -}}
{{- end -}}
{{- if and (eq $d "otlp") (not .Values.otlp.endpoint) -}}
{{- fail "destination otlp needs otlp.endpoint: host:port of the backend's OTLP/gRPC receiver" -}}
{{- end -}}
{{- if and .Values.remediation.enabled (not (has .Values.remediation.mode (list "recommend" "approve" "automatic"))) -}}
{{- fail (printf "remediation.mode %q: use recommend (log plans only), approve (wait for an operator's node annotation) or automatic" .Values.remediation.mode) -}}
{{- end -}}
{{- if and .Values.reliability.enabled .Values.gateway.autoscaling.enabled -}}
{{- fail "reliability.enabled with gateway.autoscaling.enabled: every gateway replica would watch the cluster and report the same cold starts, scalings and unschedulable pods; run the reliability watch on a single-replica gateway" -}}
{{- end -}}
{{- if and .Values.insights.enabled .Values.gateway.autoscaling.enabled -}}
{{- fail "insights.enabled with gateway.autoscaling.enabled: each gateway replica's console sees only the agents that send to it, and the Service would spread one browser's requests over them (docs/insights.md, Several gateways); turn autoscaling off to run the console" -}}
{{- end -}}
{{- if and .Values.gateway.autoscaling.enabled (lt (int .Values.gateway.autoscaling.minReplicas) 1) -}}
{{- fail "gateway.autoscaling.minReplicas must be at least 1" -}}
{{- end -}}
{{- end -}}


{{/* The gateway's account: the remediator's when remediation is on. */}}
{{- define "otelcol-accel.remediatorAccount" -}}
{{ include "otelcol-accel.fullname" . }}-remediator
{{- end -}}

{{/* The gateway's own account when it watches the cluster (reliability) and
does not run as the remediator: the agents' account stays read-only-small. */}}
{{- define "otelcol-accel.reliabilityAccount" -}}
{{ include "otelcol-accel.fullname" . }}-gateway
{{- end -}}

{{- define "otelcol-accel.gatewayAccount" -}}
{{- if .Values.remediation.enabled -}}
{{ include "otelcol-accel.remediatorAccount" . }}
{{- else if .Values.reliability.enabled -}}
{{ include "otelcol-accel.reliabilityAccount" . }}
{{- else -}}
{{ .Values.serviceAccount.name }}
{{- end -}}
{{- end -}}
