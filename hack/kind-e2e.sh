#!/usr/bin/env bash
# The end-to-end suite against the real packaging, for machines with Docker (the project's build machines have
# none, so this never runs in CI): creates a kind cluster, builds the image and loads it into the cluster,
# runs PostgreSQL (the official image, a Deployment in a namespace of its own) for the audit trail and creates
# the audit database Secret, installs the Helm chart with the bundled SpiceDB into a namespace that enforces Pod
# Security "restricted", runs (hack/chart-e2e.sh: the same install suite as the one-node cluster's, npm run test:cluster)
# the same suite that runs against the local stack (`npm run test:e2e`) through port-forwards, and deletes the
# cluster.
#
# Usage: hack/kind-e2e.sh
# Environment:
#   KIND_CLUSTER     cluster name (default policy-grant-e2e); it must not exist yet
#   KIND_NODE_IMAGE  node image, e.g. kindest/node:v1.35.x (default: the one of your kind release)
#   IMAGE            image to build and load (default policy-grant-operator:e2e); a registry with a port works,
#                    e.g. localhost:5001/policy-grant-operator:dev
#   POSTGRES_IMAGE   PostgreSQL image for the audit trail (default postgres:18)
#   KEEP_CLUSTER=1   keep the cluster afterwards (its kubeconfig path is printed)
#   HELM_BIN, KUBECTL_BIN  helm and kubectl to use (default: on PATH, else the pinned builds of hack/tools)
# Needs docker, kind, node and npm (run `npm ci` first).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cluster="${KIND_CLUSTER:-policy-grant-e2e}"
image="${IMAGE:-policy-grant-operator:e2e}"
postgres_image="${POSTGRES_IMAGE:-postgres:18}"
work="$(mktemp -d "${TMPDIR:-/tmp}/policy-grant-kind.XXXXXX")"
kubeconfig="$work/kubeconfig"
created_cluster=false

log() { printf '[kind-e2e] %s\n' "$*" >&2; }
die() {
  log "$*"
  exit 1
}

require() {
  command -v "$1" >/dev/null 2>&1 || die "$1 is required ($2)"
}

cleanup() {
  local status=$?
  if [ "$created_cluster" = true ]; then
    if [ "${KEEP_CLUSTER:-}" = 1 ]; then
      log "keeping cluster $cluster: export KUBECONFIG=$kubeconfig"
    else
      log "deleting cluster $cluster"
      kind delete cluster --name "$cluster" >/dev/null 2>&1 || true
    fi
  fi
  [ "${KEEP_CLUSTER:-}" = 1 ] || rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT

create_cluster() {
  if kind get clusters 2>/dev/null | grep -qx "$cluster"; then
    die "a kind cluster named $cluster exists already: delete it or set KIND_CLUSTER"
  fi
  log "creating kind cluster $cluster"
  created_cluster=true
  # MutatingAdmissionPolicy (beta, off by default) for the chart's grant-requester policy (auditActorPolicy).
  cat >"$work/kind.yaml" <<'YAML'
kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
featureGates:
  MutatingAdmissionPolicy: true
runtimeConfig:
  admissionregistration.k8s.io/v1beta1: 'true'
YAML
  kind create cluster --name "$cluster" --kubeconfig "$kubeconfig" --config "$work/kind.yaml" --wait 120s \
    ${KIND_NODE_IMAGE:+--image "$KIND_NODE_IMAGE"}
}

build_and_load_image() {
  log "building $image"
  docker build --tag "$image" \
    --build-arg VERSION="$(node -p 'require(process.argv[1]).version' "$repo/package.json")" \
    --build-arg REVISION="$(git -C "$repo" rev-parse HEAD 2>/dev/null || echo unknown)" \
    "$repo"
  log "loading $image into $cluster"
  kind load docker-image "$image" --name "$cluster"
}

main() {
  require docker "https://docs.docker.com/get-docker/"
  require kind "https://kind.sigs.k8s.io/docs/user/quick-start/#installation"
  require npm "Node.js with npm"
  create_cluster
  build_and_load_image
  # The same install suite as the project's own one-node cluster (hack/cluster/cluster.sh test).
  KUBECONFIG="$kubeconfig" IMAGE="$image" POSTGRES_IMAGE="$postgres_image" bash "$repo/hack/chart-e2e.sh"
  log "end-to-end suite passed on kind"
}

main "$@"
