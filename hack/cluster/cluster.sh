#!/usr/bin/env bash
# A real one-node Kubernetes on this machine, without Docker, for the install tests (needs root, Linux).
#
# Usage: hack/cluster/cluster.sh up     builds the tools and images, starts the cluster, stays until Ctrl-C
#        hack/cluster/cluster.sh test   the same, then the chart's install suite (hack/chart-e2e.sh) for each shape of
#                                       CLUSTER_SHAPES (default "bundled production": the quick development shape, then the
#                                       production topology; "bundled" alone is the quick one), a fresh cluster each, then down
#        hack/cluster/cluster.sh down   removes whatever a cluster left: processes, mounts, cgroups, namespace
#
# Everything runs in a network namespace of its own (policy-grant-cluster): the node's address, the pod and
# Service ranges, the bridge and kube-proxy's iptables rules exist only there. Commands against the cluster run
# in it too: `ip netns exec policy-grant-cluster <cmd>` with KUBECONFIG=.cluster/kubeconfig.
# State (certificates, etcd, containerd, kubelet, images, logs) is in .cluster/ (git-ignored).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/default-signals.sh"

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
state="${CLUSTER_STATE_DIR:-$repo/.cluster}"
netns=policy-grant-cluster
node_ip=10.254.0.2
cgroup_root=policy-grant-cluster
up_pid=""

log() { printf '[cluster] %s\n' "$*" >&2; }

in_netns() { nsenter --net="/run/netns/$netns" -- "$@"; }

# The node's network: loopback, and a veth pair (both ends inside; kernels without the dummy driver have veth)
# with the node's address and the default route (the kubelet and kube-proxy pick their node address from it). Forwarding and bridge netfilter on, as a node has.
create_netns() {
  ip netns add "$netns"
  ip -n "$netns" link set lo up
  ip -n "$netns" link add node0 type veth peer name node0-peer
  ip -n "$netns" link set node0-peer up
  ip -n "$netns" addr add "$node_ip/32" dev node0
  ip -n "$netns" link set node0 up
  ip -n "$netns" route add default dev node0
  modprobe br_netfilter 2>/dev/null || true
  in_netns sysctl -q -w net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1 net.ipv4.conf.all.route_localnet=1
}

kill_all() {
  local pids="$1"
  if [ -n "$pids" ]; then kill -9 $pids 2>/dev/null || true; fi
}

# Idempotent: every process in the namespace or in the pods' cgroups, every mount under the state folder (pod
# volumes, overlay root filesystems, pod network namespaces), the cgroups, the namespace, CNI's result cache.
down() {
  local pids
  if [ -e "/run/netns/$netns" ]; then kill_all "$(ip netns pids "$netns" 2>/dev/null | tr '\n' ' ')"; fi
  pids="$(find /sys/fs/cgroup/*/"$cgroup_root" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u | tr '\n' ' ' || true)"
  kill_all "$pids"
  sleep 1
  if [ -d "$state" ]; then
    awk -v prefix="$state/" 'index($5, prefix) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
      while read -r mount; do umount -l "$mount" 2>/dev/null || true; done
  fi
  for hierarchy in /sys/fs/cgroup/*/; do
    if [ -d "$hierarchy$cgroup_root" ]; then
      find "$hierarchy$cgroup_root" -depth -type d -exec rmdir {} \; 2>/dev/null || true
    fi
  done
  if [ -e "/run/netns/$netns" ]; then ip netns delete "$netns"; fi
  # libcni caches each attachment's result by network name: ours, and containerd's pods' loopback (no other
  # container runtime runs on the machines this is for).
  rm -f /var/lib/cni/results/"$netns"-* /var/lib/cni/results/cni-loopback-* 2>/dev/null || true
  rm -rf "$state/containerd" "$state/kubelet" "$state/etcd-data" "$state/cni" "$state/buildah" "$state/ready"
}

stop_cluster() {
  local status=$?
  if [ -n "$up_pid" ] && kill -0 "$up_pid" 2>/dev/null; then
    kill -TERM "$up_pid" 2>/dev/null || true
    wait "$up_pid" 2>/dev/null || true
  fi
  down
  log "cluster removed"
  exit "$status"
}

wait_ready() {
  local started=$SECONDS
  until [ -f "$state/ready" ]; do
    kill -0 "$up_pid" 2>/dev/null || { log "the cluster did not start:"; tail -n 30 "$state/up.log" >&2; exit 1; }
    [ $((SECONDS - started)) -lt 600 ] || { log "the cluster was not Ready within 600 s"; exit 1; }
    sleep 1
  done
}

# The tools and images, once per run; then the cluster.
start() {
  [ "$(id -u)" = 0 ] || { log "the cluster needs root (containerd, kubelet, network namespaces)"; exit 1; }
  exec 8>"/run/$netns.lock"
  flock -n 8 || { log "another cluster runs on this machine (lock /run/$netns.lock)"; exit 1; }
  local started=$SECONDS
  bash "$repo/hack/tools/build.sh" cluster
  local built=$SECONDS
  down
  mkdir -p "$state"
  # CLUSTER_REUSE_IMAGES=1 keeps the images of the previous run (to iterate on the cluster, not the images).
  if [ "${CLUSTER_REUSE_IMAGES:-}" != 1 ] || [ ! -f "$state/images.json" ]; then
    (cd "$repo" && npx tsx hack/cluster/build-images.ts "$state")
  fi
  local imaged=$SECONDS
  trap stop_cluster EXIT INT TERM
  boot
  log "timings: tools $((built - started)) s, images $((imaged - built)) s, cluster Ready $((SECONDS - imaged)) s"
}

boot() {
  create_netns
  # tsx itself (not npx): it passes SIGTERM on to the script, which stops what it started.
  in_netns "$repo/node_modules/.bin/tsx" "$repo/hack/cluster/up.ts" "$state" >"$state/up.log" 2>&1 &
  up_pid=$!
  wait_ready
}

# Between two shapes: everything of the first cluster goes (its etcd too), then a fresh one starts on the same
# images, so that the second release meets no object, Lease or process of the first.
reboot() {
  local started=$SECONDS
  kill -TERM "$up_pid" 2>/dev/null || true
  wait "$up_pid" 2>/dev/null || true
  down
  mkdir -p "$state"
  boot
  log "timings: fresh cluster Ready in $((SECONDS - started)) s"
}

# The install suite on the running cluster, for one shape (hack/chart-e2e.sh's SHAPE).
install_suite() {
  local shape="$1" started=$SECONDS
  in_netns env KUBECONFIG="$state/kubeconfig" IMAGE=localhost/policy-grant-operator:cluster SHAPE="$shape" \
    POSTGRES_IMAGE="$(jq -r .postgres "$state/images.json")" SPICEDB_IMAGE="$(jq -r .spicedb "$state/images.json")" \
    bash "$repo/hack/chart-e2e.sh"
  log "timings: install suite ($shape) $((SECONDS - started)) s"
}

case "${1:-}" in
  up)
    start
    log "running; run commands with: ip netns exec $netns env KUBECONFIG=$state/kubeconfig <cmd>; Ctrl-C stops it"
    wait "$up_pid"
    ;;
  test)
    start
    first=1
    for shape in ${CLUSTER_SHAPES:-bundled production}; do
      [ "$first" = 1 ] || reboot
      first=0
      install_suite "$shape"
    done
    ;;
  down) down ;;
  *)
    sed -n '2,12p' "${BASH_SOURCE[0]}" >&2
    exit 2
    ;;
esac
