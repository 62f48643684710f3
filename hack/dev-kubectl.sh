#!/usr/bin/env bash
# Runs the pinned kubectl against the running development stack (npm start).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
env_file="$root/.dev/env"
if [ ! -f "$env_file" ]; then
  echo "no development stack state in $env_file: start it with 'npm start'" >&2
  exit 1
fi
kubeconfig="$(sed -n 's/^KUBECONFIG=//p' "$env_file")"
kubectl="$(bash "$root/hack/tools/env.sh" | sed -n 's/^export KUBECTL_BIN=//p')"
exec "$kubectl" --kubeconfig "$kubeconfig" "$@"
