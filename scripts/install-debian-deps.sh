#!/usr/bin/env bash
# Installs the Debian packages the tests use, when they are missing:
#   prometheus — the dashboard test runs a real Prometheus against the collector;
#                its promtool proves the alert rules (test/e2e/alerts_test.go).
#   chromium   — the insights console's tests (test/browser) drive a real,
#                headless browser over the DevTools protocol.
#   etcd-server — the store of the kube-apiserver the remediation exporter's
#                tests start (internal/kubetest).
set -euo pipefail
missing=()
{ command -v prometheus && command -v promtool; } >/dev/null 2>&1 || missing+=(prometheus)
[[ -x /usr/bin/chromium ]] || command -v chromium >/dev/null 2>&1 || missing+=(chromium)
[[ -x /usr/bin/etcd ]] || missing+=(etcd-server)
[[ ${#missing[@]} -eq 0 ]] && exit 0
echo ">> installing Debian packages: ${missing[*]}"
sudo=""
[[ $(id -u) -ne 0 ]] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# policy-rc.d keeps the package from starting its own service on install.
if [[ -z "$sudo" && ! -e /usr/sbin/policy-rc.d ]]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
