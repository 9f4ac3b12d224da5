package accelschema

// RemediationAnnotationPrefix is the default prefix of the node annotations
// and taints through which accelerator_remediation (on the gateway) and the
// node agent's accelerator_gpu_reset receiver speak: both components'
// annotation_prefix defaults to it, and they must agree.
const RemediationAnnotationPrefix = "accelerator.otelcol-accel.io"

// GPUResetAnnotation is the node annotation, under prefix, that asks the
// node's agent to reset a GPU; its value is "<device uuid>@<plan id>".
func GPUResetAnnotation(prefix string) string { return prefix + "/gpu-reset" }
