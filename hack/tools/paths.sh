# Where the pinned tools live. Sourced after versions.env.
# One cache per machine (outside any clone, so every checkout reuses it); PGO_TOOLS_CACHE overrides it.
TOOLS_CACHE="${PGO_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/policy-grant-operator/tools}"

kubernetes_dir() { echo "$TOOLS_CACHE/kubernetes-$KUBERNETES_VERSION"; }
etcd_dir() { echo "$TOOLS_CACHE/etcd-$ETCD_VERSION"; }
spicedb_dir() { echo "$TOOLS_CACHE/spicedb-$SPICEDB_VERSION"; }
helm_dir() { echo "$TOOLS_CACHE/helm-$HELM_VERSION"; }
openfga_dir() { echo "$TOOLS_CACHE/openfga-$OPENFGA_VERSION"; }
kubernetes_node_dir() { echo "$TOOLS_CACHE/kubernetes-node-$KUBERNETES_VERSION"; }
coredns_dir() { echo "$TOOLS_CACHE/coredns-$COREDNS_VERSION"; }
pause_dir() { echo "$TOOLS_CACHE/pause-$KUBERNETES_VERSION"; }
# A marker folder: the Debian packages live in the system, the folder says the pinned set is installed.
node_packages_dir() { echo "$TOOLS_CACHE/node-packages-$(printf '%s' "$CLUSTER_DEBIAN_PACKAGES" | sha256sum | cut -c1-12)"; }
# The same for the gateway's Debian packages (nginx and its njs module).
gateway_packages_dir() { echo "$TOOLS_CACHE/gateway-packages-$(printf '%s' "$GATEWAY_DEBIAN_PACKAGES" | sha256sum | cut -c1-12)"; }
# The folder KUBEBUILDER_ASSETS names: etcd, kube-apiserver and kubectl side by side.
assets_dir() { echo "$TOOLS_CACHE/assets-$KUBERNETES_VERSION-etcd-$ETCD_VERSION"; }
# A Python virtual environment; bin/schemathesis runs the fuzzer.
schemathesis_dir() { echo "$TOOLS_CACHE/schemathesis-$SCHEMATHESIS_VERSION"; }
# The enforcement points built on AuthZEN client libraries, from the sources in the repository: a change to
# them builds anew.
authzen_clients_sources() { echo "$(dirname "${BASH_SOURCE[0]}")/../../test/integration/decision/authzen/clients"; }
authzen_clients_dir() {
  local digest
  digest="$(cd "$(authzen_clients_sources)" && find . -type f -not -path './*/target/*' -not -path './*/__pycache__/*' | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-12)"
  echo "$TOOLS_CACHE/authzen-clients-$OPENIDAUTHZEN_VERSION-$EMPOWERNOW_SDK_VERSION-$digest"
}
