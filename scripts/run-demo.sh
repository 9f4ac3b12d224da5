#!/usr/bin/env bash
# `make run`: the demo fleet. Starts the fleet simulator (accelsim), one
# otelcol-accel node agent per simulated node (as a DaemonSet would run them,
# with the shipped agent.yaml), and one gateway that exposes everything for
# Prometheus on localhost:8889 and writes EMF and events files, and runs
# remediation in approve mode against the simulated cluster. Health events
# and cost findings are printed as they happen. The gateway starts first, so
# the first line printed is the insights console's URL. Ctrl-C stops
# everything.
#
# Environment: ACCELSIM_SPEED (simulated seconds per second, default 10),
# OTELCOL_ACCEL_DEMO_DIR (state, logs and outputs, default _build/demo),
# OTELCOL_ACCEL_INSIGHTS_ENDPOINT (the console, default 127.0.0.1:8686).
set -euo pipefail
cd "$(dirname "$0")/.."

collector=_build/otelcol-accel
# Nodes run the agent build (builder-config-agent.yaml), as the DaemonSets do.
agent=_build/otelcol-accel-agent
accelsim=_build/accelsim
config=distributions/otelcol-accel/config
scenario=distributions/otelcol-accel/demo/fleet.yaml
state=${OTELCOL_ACCEL_DEMO_DIR:-$PWD/_build/demo}
speed=${ACCELSIM_SPEED:-10}
insights=${OTELCOL_ACCEL_INSIGHTS_ENDPOINT:-127.0.0.1:8686}
console="http://$insights/"

for port in 8889 13133 4317 "${insights##*:}"; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "port $port is in use (another demo or collector?): stop it first" >&2
    exit 1
  fi
done

rm -rf "$state"
mkdir -p "$state"
pids=()
stop() {
  trap - EXIT INT TERM
  echo
  echo ">> stopping the demo"
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  echo ">> stopped; logs and outputs are in $state"
  exit 0
}
trap stop EXIT INT TERM

wait_for() { # wait_for SECONDS DESCRIPTION COMMAND...
  local deadline=$((SECONDS + $1)) what=$2
  shift 2
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS > deadline)); then
      echo "!! $what did not come up; see the logs in $state" >&2
      exit 1
    fi
    sleep 0.3
  done
}
healthy() { curl -fsS "http://$1/status" >/dev/null; }

# The simulator first, silently: the gateway's remediation reaches the
# simulated cluster with the kubeconfig it writes. The console's URL is still
# the first thing the demo prints.
"$accelsim" serve --scenario "$scenario" --state-dir "$state" --speed "$speed" \
  >"$state/accelsim.out" 2>"$state/accelsim.log" &
pids+=($!)
wait_for 30 "accelsim" grep -q "accelsim ready" "$state/accelsim.out"

# The gateway, with remediation in approve mode (demo-remediation.yaml).
mkdir -p "$state/gateway"
OTELCOL_ACCEL_DEMO_DIR="$state" \
OTELCOL_ACCEL_KUBECONFIG="$state/kubeconfig" \
OTELCOL_ACCEL_K8S_AUTH=kubeConfig \
OTELCOL_ACCEL_K8S_INTERVAL=5s \
OTELCOL_ACCEL_STORAGE_DIR="$state/gateway" \
OTELCOL_ACCEL_HEALTH_ENDPOINT=127.0.0.1:13133 \
OTELCOL_ACCEL_PROMETHEUS_ENDPOINT=0.0.0.0:8889 \
OTELCOL_ACCEL_OTLP_GRPC_ENDPOINT=127.0.0.1:4317 \
OTELCOL_ACCEL_OTLP_HTTP_ENDPOINT=127.0.0.1:4318 \
OTELCOL_ACCEL_TELEMETRY_HOST=127.0.0.1 \
OTELCOL_ACCEL_TELEMETRY_PORT=8888 \
OTELCOL_ACCEL_INSIGHTS_ENDPOINT="$insights" \
  "$collector" --config "$config/gateway.yaml" --config "$config/demo-gateway.yaml" \
  --config "$config/k8s-reliability.yaml" \
  --config "$config/remediation.yaml" --config "$config/demo-remediation.yaml" \
  >"$state/gateway/collector.log" 2>&1 &
pids+=($!)
wait_for 60 "the gateway" healthy 127.0.0.1:13133
wait_for 30 "the insights console" curl -fsS "${console}api/v1/session"
echo "Insights console: $console"
echo
echo ">> the gateway is up (OTLP in on 127.0.0.1:4317; Prometheus exporter on :8889)"

echo ">> the simulated fleet: $scenario at ${speed}x speed (Kubernetes API: kubeconfig $state/kubeconfig)"
"$accelsim" validate "$scenario"

i=0
nodes=$("$accelsim" agent-config --endpoints "$state/endpoints.json" --out-dir "$state")
for node in $nodes; do
  health=127.0.0.1:$((13140 + i))
  echo ">> starting the agent of $node (health http://$health/status)"
  K8S_NODE_NAME="$node" \
  OTELCOL_ACCEL_GATEWAY_ENDPOINT=127.0.0.1:4317 \
  OTELCOL_ACCEL_STORAGE_DIR="$state/$node/state" \
  OTELCOL_ACCEL_INTERVAL=5s \
  OTELCOL_ACCEL_HEALTH_ENDPOINT="$health" \
  OTELCOL_ACCEL_TELEMETRY_HOST=127.0.0.1 \
  OTELCOL_ACCEL_TELEMETRY_PORT=$((8900 + i)) \
    "$agent" --config "$config/agent.yaml" --config "$config/agent-to-gateway.yaml" \
    --config "$config/demo-agent.yaml" --config "$state/$node/agent.yaml" \
    >"$state/$node/collector.log" 2>&1 &
  pids+=($!)
  wait_for 60 "the agent of $node" healthy "$health"
  i=$((i + 1))
done

cat <<EOF

otelcol-accel demo is running: $i simulated nodes, one agent each, one gateway.

  Insights console:       $console
                          fleet, devices, teams, findings, inference, capacity, reliability
  Metrics (Prometheus):   curl -s localhost:8889/metrics | grep -E 'accelerator_(cost|waste)'
                          every device with pod, team, partition, cost and waste
  EMF for CloudWatch:     $state/emf.jsonl
  Health events, findings: $state/events.jsonl (printed below as they happen)
  Collector logs:         $state/*/collector.log

  Simulated failures at ${speed}x speed: row remap pending at ~$((600 / speed))s, XID 48 at ~$((1200 / speed))s,
  Neuron uncorrected ECC at ~$((1500 / speed))s, XID 79 at ~$((1800 / speed))s. Findings need a minute of history.

  Remediation (approve mode): each failure makes a plan that waits for approval (nothing changes before it):
                          gpu-h100-a and gpu-a100-a (row remap, XID 48: evict the GPU's holder), neuron-inf2-a and
                          gpu-h200-a (Neuron ECC, XID 79: cordon and drain). At most 2 nodes at once: a third waits.
  Plans:                  grep 'plan awaiting_approval' $state/gateway/collector.log   (plan id, node)
                          or the insights console ($console), where it lists plans
  Approve a plan:         $accelsim approve --state-dir $state --node <node> --plan <plan id>
                          or: kubectl --kubeconfig $state/kubeconfig annotate node <node> accelerator.otelcol-accel.io/approve=<plan id>
                          or the console's Approve button
  See it act:             kubectl --kubeconfig $state/kubeconfig get nodes,pods -A   (XID 79: gpu-h200-a cordoned and drained;
                          XID 48: only the holder of gpu-a100-a GPU 6 evicted)
  Ctrl-C stops everything.

EOF
"$accelsim" events -follow "$state/events.jsonl" &
pids+=($!)
wait
