{{/* The gateway's pod template, shared by the Deployment and the autoscaled StatefulSet. */}}
{{- define "otelcol-accel.gatewayPod" -}}
metadata:
  labels:
    app.kubernetes.io/name: otelcol-accel-gateway
    app.kubernetes.io/component: gateway
    {{- include "otelcol-accel.labels" . | nindent 4 }}
  annotations:
    checksum/config: {{ include (print $.Template.BasePath "/configmaps.yaml") . | sha256sum }}
spec:
  serviceAccountName: {{ include "otelcol-accel.gatewayAccount" . }}
  securityContext:
    fsGroup: 10001
  {{- with .Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  containers:
    - name: otelcol-accel
      image: {{ include "otelcol-accel.image" . }}
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      args:
        {{- range (include "otelcol-accel.gatewayConfigs" . | fromJsonArray) }}
        - --config=/etc/otelcol-accel/{{ . }}
        {{- end }}
      env:
        - name: OTELCOL_ACCEL_STORAGE_DIR
          value: /var/lib/otelcol-accel
        - name: K8S_POD_NAME
          valueFrom:
            fieldRef: {fieldPath: metadata.name}
        - name: GOMEMLIMIT
          value: {{ .Values.gateway.goMemLimit }}
        {{- if .Values.region }}
        - name: AWS_REGION
          value: {{ .Values.region | quote }}
        {{- end }}
        {{- if eq .Values.destination "cloudwatch-emf" }}
        - name: OTELCOL_ACCEL_EMF_NAMESPACE
          value: {{ .Values.cloudwatchEMF.namespace | quote }}
        {{- end }}
        {{- if eq .Values.destination "cloudwatch-otlp" }}
        - name: OTELCOL_ACCEL_LOG_GROUP
          value: {{ .Values.cloudwatchOTLP.logGroup | quote }}
        - name: OTELCOL_ACCEL_LOG_STREAM
          value: {{ .Values.cloudwatchOTLP.logStream | quote }}
        {{- end }}
        {{- if eq .Values.destination "amp" }}
        - name: OTELCOL_ACCEL_AMP_REMOTE_WRITE_URL
          value: {{ .Values.amp.remoteWriteURL | quote }}
        {{- end }}
        {{- if eq .Values.destination "otlp" }}
        - name: OTELCOL_ACCEL_OTLP_BACKEND_ENDPOINT
          value: {{ .Values.otlp.endpoint | quote }}
        - name: OTELCOL_ACCEL_OTLP_BACKEND_INSECURE
          value: {{ .Values.otlp.insecure | quote }}
        {{- end }}
        {{- if .Values.remediation.enabled }}
        # The Lease of the remediator's leader election lives here.
        - name: OTELCOL_ACCEL_NAMESPACE
          valueFrom:
            fieldRef: {fieldPath: metadata.namespace}
        - name: OTELCOL_ACCEL_REMEDIATION_MODE
          value: {{ .Values.remediation.mode | quote }}
        # Only this account's pods speak for their nodes' health (accelerator_sender).
        - name: OTELCOL_ACCEL_AGENT_SERVICE_ACCOUNT
          value: {{ printf "%s/%s" .Release.Namespace .Values.serviceAccount.name | quote }}
        {{- if .Values.remediation.dryRun }}
        - name: OTELCOL_ACCEL_REMEDIATION_DRY_RUN
          value: "true"
        {{- end }}
        {{- with .Values.remediation.escalationEndpoint }}
        - name: OTELCOL_ACCEL_ESCALATION_ENDPOINT
          value: {{ . | quote }}
        {{- end }}
        {{- end }}
        {{- if .Values.insights.enabled }}
        # All interfaces, so the insights Service reaches it (insights.yaml's
        # default is loopback only).
        - name: OTELCOL_ACCEL_INSIGHTS_ENDPOINT
          value: 0.0.0.0:{{ .Values.insights.port }}
        # Any other Host is refused (DNS rebinding; docs/security.md).
        - name: OTELCOL_ACCEL_INSIGHTS_ALLOWED_HOSTS
          value: {{ include "otelcol-accel.insightsAllowedHosts" . | quote }}
        - name: OTELCOL_ACCEL_INSIGHTS_ALLOWED_ORIGINS
          value: {{ toJson .Values.insights.allowedOrigins | quote }}
        {{- if eq .Values.insights.auth.type "oidc" }}
        - name: OTELCOL_ACCEL_INSIGHTS_OIDC_ISSUER_URL
          value: {{ .Values.insights.auth.oidc.issuerURL | quote }}
        - name: OTELCOL_ACCEL_INSIGHTS_OIDC_AUDIENCE
          value: {{ .Values.insights.auth.oidc.audience | quote }}
        - name: OTELCOL_ACCEL_INSIGHTS_OIDC_USERNAME_CLAIM
          value: {{ .Values.insights.auth.oidc.usernameClaim | quote }}
        {{- end }}
        {{- end }}
      ports:
        - {name: otlp-grpc, containerPort: 4317, protocol: TCP}
        - {name: otlp-http, containerPort: 4318, protocol: TCP}
        - {name: prometheus, containerPort: 8889, protocol: TCP}
        - {name: health, containerPort: 13133, protocol: TCP}
        - {name: telemetry, containerPort: 8888, protocol: TCP}
        {{- if .Values.insights.enabled }}
        - {name: insights, containerPort: {{ .Values.insights.port }}, protocol: TCP}
        {{- end }}
      livenessProbe:
        httpGet: {path: /status, port: health}
        initialDelaySeconds: 10
        periodSeconds: 30
      readinessProbe:
        httpGet: {path: /status, port: health}
        periodSeconds: 10
      resources:
        {{- toYaml .Values.gateway.resources | nindent 8 }}
      securityContext:
        readOnlyRootFilesystem: true
        allowPrivilegeEscalation: false
        runAsNonRoot: true
        runAsUser: 10001
      volumeMounts:
        - {name: config, mountPath: /etc/otelcol-accel, readOnly: true}
        - {name: queue, mountPath: /var/lib/otelcol-accel}
        {{- if and .Values.insights.enabled (eq .Values.insights.auth.type "bearertoken") }}
        # insights-bearertoken.yaml's default OTELCOL_ACCEL_INSIGHTS_TOKENS_FILE.
        - {name: insights-auth, mountPath: /etc/otelcol-accel-auth, readOnly: true}
        {{- end }}
  volumes:
    - name: config
      configMap: {name: {{ include "otelcol-accel.fullname" . }}-gateway}
    {{- if and .Values.insights.enabled (eq .Values.insights.auth.type "bearertoken") }}
    - name: insights-auth
      secret:
        secretName: {{ .Values.insights.auth.bearerToken.secretName }}
        items: [{key: tokens, path: tokens}]
    {{- end }}
    {{- if not .Values.gateway.autoscaling.enabled }}
    - name: queue
      persistentVolumeClaim: {claimName: {{ include "otelcol-accel.fullname" . }}-gateway-queue}
    {{- end }}
{{- end -}}

{{- define "otelcol-accel.queueClaimSpec" -}}
accessModes: [ReadWriteOnce]
{{- with .Values.gateway.persistence.storageClassName }}
storageClassName: {{ . }}
{{- end }}
resources:
  requests:
    storage: {{ .Values.gateway.persistence.size }}
{{- end -}}
