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
{{- if not .Values.agents.kernelLog.enabled }}
- name: OTELCOL_ACCEL_KERNEL_LOG
  value: none
{{- end }}
{{- end -}}

{{- define "otelcol-accel.agentContainer" -}}
name: otelcol-accel
image: {{ include "otelcol-accel.agentImage" . }}
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
{{- if .Values.agents.kernelLog.enabled }}
# privileged: only for the kernel log (health.kernel_log, source: kmsg).
# Opening /dev/kmsg needs CAP_SYSLOG and the device allowed by the runtime's
# device cgroup, which a hostPath mount alone does not give;
# node-problem-detector and the EKS node monitoring agent run privileged for
# the same reason. Kubernetes refuses allowPrivilegeEscalation: false beside
# privileged: true. agents.kernelLog.enabled: false drops this and the mount.
securityContext:
  privileged: true
  readOnlyRootFilesystem: true
{{- else }}
securityContext:
  readOnlyRootFilesystem: true
  allowPrivilegeEscalation: false
{{- end }}
{{- end -}}

{{/* The kernel log's read-only mount and its volume (agents.kernelLog.enabled). */}}
{{- define "otelcol-accel.kernelLogMount" -}}
{{- if .Values.agents.kernelLog.enabled }}
# health.kernel_log: the drivers' XID and hardware-error lines, read-only.
- {name: kmsg, mountPath: /dev/kmsg, readOnly: true}
{{- end }}
{{- end -}}

{{- define "otelcol-accel.kernelLogVolume" -}}
{{- if .Values.agents.kernelLog.enabled }}
- name: kmsg
  hostPath: {path: /dev/kmsg, type: CharDevice}
{{- end }}
{{- end -}}

{{/* The agent's identity to the gateway (docs/security.md, "Telemetry into
the gateway"): a service account token the kubelet projects, bound to this
pod (and so to its node) and to the gateway's audience, renewed before it
expires; agent-to-gateway.yaml's k8s_token_auth sends it, the gateway
verifies it with TokenReview. Useless to the API server (wrong audience). */}}
{{- define "otelcol-accel.gatewayTokenMount" -}}
- {name: gateway-token, mountPath: /var/run/secrets/otelcol-accel/gateway-token, readOnly: true}
{{- end -}}

{{- define "otelcol-accel.gatewayTokenVolume" -}}
- name: gateway-token
  projected:
    sources:
      - serviceAccountToken:
          path: token
          audience: otelcol-accel-gateway
          expirationSeconds: 3600
{{- end -}}
