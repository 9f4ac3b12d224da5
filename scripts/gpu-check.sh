#!/usr/bin/env bash
# make gpu-check: exercise the dcgm receiver's real NVML path on a machine
# with an NVIDIA GPU and driver. Builds a small program (build tag gpucheck,
# cgo) that enumerates the GPUs, MIG mode and instances, GPM support and
# values, processes and event support through NVML, then runs the receiver
# (source: nvml) for two scrapes and prints every data point it emits.
# Exits non-zero when a check fails; see docs/gpu-check.md.
#
#   scripts/gpu-check.sh [-interval 3s]
#
# GPU_CHECK_TIMEOUT (seconds, default 300) bounds the run.
set -euo pipefail
cd "$(dirname "$0")/.."

bin="${TMPDIR:-/tmp}/otelcol-accel-gpu-check"
echo ">> building the GPU check (CGO_ENABLED=1 go build -tags gpucheck)"
CGO_ENABLED=1 go build -tags gpucheck -o "$bin" ./receiver/dcgmreceiver/internal/gpucheck

if ! command -v nvidia-smi >/dev/null 2>&1 && ! ldconfig -p 2>/dev/null | grep -q libnvidia-ml.so.1; then
	echo ">> note: neither nvidia-smi nor libnvidia-ml.so.1 is visible; the check will report the missing driver" >&2
fi

echo ">> running it (timeout ${GPU_CHECK_TIMEOUT:-300}s)"
set +e
timeout "${GPU_CHECK_TIMEOUT:-300}" "$bin" "$@"
rc=$?
set -e
case $rc in
0) echo ">> gpu-check passed" ;;
2) echo ">> gpu-check could not open NVML: run it on a machine with an NVIDIA GPU and driver" >&2 ;;
124) echo ">> gpu-check timed out after ${GPU_CHECK_TIMEOUT:-300}s" >&2 ;;
*) echo ">> gpu-check failed (exit $rc)" >&2 ;;
esac
exit $rc
