// Package neuronreceiver implements the `neuron` receiver: it runs AWS
// neuron-monitor as a supervised child process (or follows its output in a
// file or FIFO) and maps each JSON report onto the unified accelerator
// schema — one resource per Neuron device and per NeuronCore, device memory,
// ECC errors, runtime execution statistics — plus health log records for
// hardware ECC events. See README.md.
package neuronreceiver
