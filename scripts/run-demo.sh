#!/usr/bin/env bash
# `make run`: starts the collector with the default configuration and says
# what it is doing. Ctrl-C stops it cleanly.
set -euo pipefail
cd "$(dirname "$0")/.."
config=distributions/otelcol-accel/config/agent.yaml
echo ">> starting _build/otelcol-accel with $config"
echo "   Prometheus exporter: http://localhost:8889/metrics"
echo "   health:              http://localhost:13133/status"
echo "   Ctrl-C to stop"
exec _build/otelcol-accel --config "$config"
