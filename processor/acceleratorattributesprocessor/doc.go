//go:generate ../../bin/mdatagen metadata.yaml

// Package acceleratorattributesprocessor says who uses each accelerator
// device and which slice of it: pod, namespace, container, workload and
// team (Kubernetes), task and container (ECS), or job (a mapping file), and
// the partition identity and share (MIG, time-slicing, MPS, DRA,
// NeuronCores). See README.md.
package acceleratorattributesprocessor
