{{/* What both agent DaemonSets share: the collector container's env, ports, probes and mounts. */}}
{{- define "otelcol-accel.agentEnv" -}}
- name: K8S_NODE_NAME
  valueFrom:
    fieldRef: {fieldPath: spec.nodeName}
- name: K8S_POD_NAME
  valueFrom:
    fieldRef: {fieldPath: metadata.name}
- name: K8S_CLUSTER_NAME
  value: {{ .Values.clusterName | quote }}
- name: OTELCOL_ACCEL_GATEWAY_ENDPOINT
  value: {{ include "otelcol-accel.gatewayEndpoint" . }}
- name: OTELCOL_ACCEL_STORAGE_DIR
  value: /var/lib/otelcol-accel
- name: OTELCOL_ACCEL_K8S_AUTH
  value: serviceAccount
{{- end -}}

{{- define "otelcol-accel.agentContainer" -}}
name: otelcol-accel
image: {{ include "otelcol-accel.image" . }}
imagePullPolicy: {{ .Values.image.pullPolicy }}
args:
  - --config=/etc/otelcol-accel/agent.yaml
  - --config=/etc/otelcol-accel/agent-to-gateway.yaml
ports:
  - {name: prometheus, containerPort: 8889, protocol: TCP}
  - {name: health, containerPort: 13133, protocol: TCP}
  - {name: telemetry, containerPort: 8888, protocol: TCP}
  # Sidecars beside inference servers send here (their node's agent).
  - {name: otlp-grpc, containerPort: 4317, hostPort: {{ .Values.agents.otlpHostPort }}, protocol: TCP}
livenessProbe:
  httpGet: {path: /status, port: health}
  initialDelaySeconds: 10
  periodSeconds: 30
readinessProbe:
  httpGet: {path: /status, port: health}
  periodSeconds: 10
resources:
  {{- toYaml .Values.agents.resources | nindent 2 }}
securityContext:
  readOnlyRootFilesystem: true
  allowPrivilegeEscalation: false
{{- end -}}
