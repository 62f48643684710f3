# Where the pinned tools live. Sourced after versions.env.
# One cache per machine (outside any clone, so every checkout reuses it); PGO_TOOLS_CACHE overrides it.
TOOLS_CACHE="${PGO_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/policy-grant-operator/tools}"

kubernetes_dir() { echo "$TOOLS_CACHE/kubernetes-$KUBERNETES_VERSION"; }
etcd_dir() { echo "$TOOLS_CACHE/etcd-$ETCD_VERSION"; }
spicedb_dir() { echo "$TOOLS_CACHE/spicedb-$SPICEDB_VERSION"; }
helm_dir() { echo "$TOOLS_CACHE/helm-$HELM_VERSION"; }
# The folder KUBEBUILDER_ASSETS names: etcd, kube-apiserver and kubectl side by side.
assets_dir() { echo "$TOOLS_CACHE/assets-$KUBERNETES_VERSION-etcd-$ETCD_VERSION"; }
# A Python virtual environment; bin/schemathesis runs the fuzzer.
schemathesis_dir() { echo "$TOOLS_CACHE/schemathesis-$SCHEMATHESIS_VERSION"; }
