//go:generate ../../bin/mdatagen metadata.yaml

// Package inferencereceiver scrapes LLM inference servers (vLLM, SGLang,
// Triton, TGI, NIM) and emits their serving signals as OpenTelemetry GenAI
// server metrics, one resource per (server, model).
package inferencereceiver // import "github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver"
