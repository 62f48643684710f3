#!/usr/bin/env bash
# Builds the pinned control-plane tools (etcd, kube-apiserver, kubectl, SpiceDB, helm) from Go modules
# into a per-machine cache, once. A second run finds every binary and returns in well under a second.
# The one-node cluster's tools are built only when asked for (`cluster`): the node's Kubernetes components,
# CoreDNS, the pause binary, and the node's Debian packages (containerd, runc, CNI plugins; needs root). The
# gateway test's nginx and njs (Debian packages; needs root) only when asked for (`gateway`), and OpenFGA, the peer
# of `npm run bench:check`, only for that benchmark (`openfga`).
#
# Usage: hack/tools/build.sh [tool...]
#   tools: kubernetes etcd spicedb helm schemathesis authzen_clients (the default), kubernetes_node coredns pause
#   node_packages,
#   cluster (= every tool of both lists), gateway (nginx and its njs module, Debian packages; needs root),
#   openfga (the benchmark's peer)
# Prints progress on stderr. Exits non-zero, naming the alternatives, when Go is missing.
# schemathesis (the OpenAPI fuzzer of the contract test) is a Python package: it is installed with pip into a
# virtual environment of the cache instead (Python 3 is its only prerequisite). The AuthZEN client test's
# enforcement points (authzen_clients) are Rust programs on crates.io libraries, built with cargo.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"
# shellcheck source=paths.sh
source "$here/paths.sh"

log() { printf '[tools] %s\n' "$*" >&2; }

require_go() {
  if command -v go >/dev/null 2>&1; then return; fi
  cat >&2 <<'EOF'
[tools] Go is not installed, so the control-plane binaries cannot be built.
[tools] Install Go (https://go.dev/dl), or point at existing binaries instead:
[tools]   KUBEBUILDER_ASSETS=<dir with etcd, kube-apiserver, kubectl>  (or TEST_ASSET_ETCD,
[tools]   TEST_ASSET_KUBE_APISERVER, TEST_ASSET_KUBECTL), SPICEDB_BIN=<spicedb>, HELM_BIN=<helm>,
[tools] or set KUBECONFIG to an existing cluster (with SPICEDB_ENDPOINT for an existing SpiceDB).
EOF
  exit 1
}

# Pinned builds use the machine's Go unless GO_TOOLCHAIN names another (fetched once by `go` itself and
# verified by the checksum database); the pinned versions need no checksum database of their own.
go_env() {
  if [ -n "${GO_TOOLCHAIN:-}" ]; then
    env GOTOOLCHAIN="$GO_TOOLCHAIN" GOFLAGS=-mod=mod CGO_ENABLED=0 "$@"
  else
    env GOTOOLCHAIN=local GOSUMDB=off GOFLAGS=-mod=mod CGO_ENABLED=0 "$@"
  fi
}

# Writes a wrapper module in $1 that requires module $2 at version $3, with the replace lines in $4.
write_wrapper_module() {
  local dir="$1" module="$2" version="$3" replaces="$4"
  mkdir -p "$dir"
  {
    echo "module policygrant.dev/hack/tools/wrapper"
    echo
    echo "go 1.24"
    echo
    echo "require $module $version"
    if [ -n "$replaces" ]; then
      echo
      echo "replace ("
      echo "$replaces"
      echo ")"
    fi
  } >"$dir/go.mod"
}

# Replace lines for the staging modules of k8s.io/kubernetes: its go.mod points them at ./staging,
# which does not exist outside its repository, so each is pinned to its published v0.<minor>.<patch>.
kubernetes_staging_replaces() {
  local gomod staging_version="v0.${KUBERNETES_VERSION#v1.}"
  gomod="$(go_env go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -nE 's/^\s*"GoMod": "(.*)",?$/\1/p')"
  sed -nE 's#^\s*(k8s\.io/[^ ]+) => \./staging/src/.*#\1#p' "$gomod" |
    while read -r module; do printf '\t%s => %s %s\n' "$module" "$module" "$staging_version"; done
}

# Builds packages ($4...) of module $1@$2 into $3 with ldflags from $LDFLAGS.
build_module() {
  local module="$1" version="$2" outdir="$3"
  shift 3
  local work="$TOOLS_CACHE/src/$(basename "$outdir")"
  rm -rf "$work" "$outdir.tmp"
  write_wrapper_module "$work" "$module" "$version" "${REPLACES:-}"
  (
    cd "$work"
    log "resolving $module@$version"
    go_env go get "${@/%/@$version}" >&2
    for pkg in "$@"; do
      log "compiling $(basename "$pkg") (several minutes on a cold cache)"
      go_env go build -trimpath -ldflags "-s -w ${LDFLAGS:-}" -o "$outdir.tmp/$(basename "$pkg")" "$pkg"
    done
  )
  rm -rf "$outdir"
  mv "$outdir.tmp" "$outdir"
}

kubernetes_ldflags() {
  local minor="${KUBERNETES_VERSION#v1.}"
  minor="${minor%%.*}"
  local flags="" pkg
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X $pkg.gitVersion=$KUBERNETES_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    flags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  done
  echo "$flags"
}

build_kubernetes() {
  REPLACES="$(kubernetes_staging_replaces)" LDFLAGS="$(kubernetes_ldflags)" \
    build_module k8s.io/kubernetes "$KUBERNETES_VERSION" "$(kubernetes_dir)" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl
}

# The node's components, from the same module build as kube-apiserver; their own folder, so that adding
# them never rebuilds the control plane's.
build_kubernetes_node() {
  REPLACES="$(kubernetes_staging_replaces)" LDFLAGS="$(kubernetes_ldflags)" \
    build_module k8s.io/kubernetes "$KUBERNETES_VERSION" "$(kubernetes_node_dir)" \
    k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy \
    k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler
}

# The pod sandbox's pause binary, from the C source in the same k8s.io/kubernetes module, linked statically
# so that its image needs nothing else.
build_pause() {
  local source
  source="$(go_env go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -nE 's/^\s*"Dir": "(.*)",?$/\1/p')"
  rm -rf "$(pause_dir).tmp"
  mkdir -p "$(pause_dir).tmp"
  cc -Os -Wall -Werror -static -DVERSION="$KUBERNETES_VERSION" -o "$(pause_dir).tmp/pause" "$source/build/pause/linux/pause.c"
  strip "$(pause_dir).tmp/pause"
  rm -rf "$(pause_dir)"
  mv "$(pause_dir).tmp" "$(pause_dir)"
}

build_coredns() {
  LDFLAGS="-X github.com/coredns/coredns/coremain.GitCommit=$COREDNS_VERSION" \
    build_module github.com/coredns/coredns "$COREDNS_VERSION" "$(coredns_dir)" github.com/coredns/coredns
}

# Debian packages ($2: the pinned list), exactly the pinned versions, for $1 (what needs them).
install_debian_packages() {
  local what="$1" packages
  read -ra packages <<<"$2"
  if [ "$(id -u)" != 0 ]; then
    log "$what Debian packages need root: run as root, or: apt-get install ${packages[*]}"
    exit 1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}" >&2 ||
    { apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}" >&2; }
}

# A marker named after the pins makes a second run instant.
build_node_packages() {
  install_debian_packages "the cluster's" "$CLUSTER_DEBIAN_PACKAGES"
  # The packages' services would start a containerd of their own; the cluster scripts run theirs.
  if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then systemctl disable --now containerd >&2 || true; fi
  mkdir -p "$(node_packages_dir)"
}

# Not a Go module: Debian's archive is its only source (its prerequisite is apt-get, not Go).
prepare_gateway_packages() {
  if command -v apt-get >/dev/null 2>&1; then return; fi
  log "the gateway test's nginx comes from Debian's archive and apt-get is missing: install $GATEWAY_DEBIAN_PACKAGES"
  exit 1
}

build_gateway_packages() {
  install_debian_packages "the gateway's" "$GATEWAY_DEBIAN_PACKAGES"
  # The package's service would answer on port 80 with Debian's default site; the gateway test runs its own nginx.
  if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then systemctl disable --now nginx >&2 || true; fi
  mkdir -p "$(gateway_packages_dir)"
}

build_etcd() {
  build_module go.etcd.io/etcd/server/v3 "$ETCD_VERSION" "$(etcd_dir)" go.etcd.io/etcd/server/v3
  mv "$(etcd_dir)/v3" "$(etcd_dir)/etcd"
}

build_spicedb() {
  GO_TOOLCHAIN="$SPICEDB_GO_TOOLCHAIN" LDFLAGS="-X github.com/jzelinskie/cobrautil/v2.Version=$SPICEDB_VERSION" \
    build_module github.com/authzed/spicedb "$SPICEDB_VERSION" "$(spicedb_dir)" github.com/authzed/spicedb/cmd/spicedb
}

build_helm() {
  local major="${HELM_VERSION%%.*}"
  LDFLAGS="-X helm.sh/helm/$major/internal/version.version=$HELM_VERSION" \
    build_module "helm.sh/helm/$major" "$HELM_VERSION" "$(helm_dir)" "helm.sh/helm/$major/cmd/helm"
}

build_openfga() {
  LDFLAGS="-X github.com/openfga/openfga/internal/build.Version=$OPENFGA_VERSION" \
    build_module github.com/openfga/openfga "$OPENFGA_VERSION" "$(openfga_dir)" github.com/openfga/openfga/cmd/openfga
}

# python3 -m venv needs ensurepip, which Debian and Ubuntu ship apart, in python3-venv.
prepare_schemathesis() {
  if ! command -v python3 >/dev/null 2>&1; then
    log "python3 is missing, so schemathesis cannot be installed: install Python >= 3.10 and python3-venv"
    exit 1
  fi
  if python3 -c 'import ensurepip, venv' 2>/dev/null; then return; fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "installing python3-venv (python3 -m venv needs it)"
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >&2
    return
  fi
  log "python3 cannot create virtual environments: install python3-venv (sudo apt-get install python3-venv)"
  exit 1
}

# The virtual environment is made in a scratch folder and moved into place whole, so that a folder in the
# cache is always complete. A venv's entry-point scripts name its absolute path, so the tool runs through
# bin/schemathesis, which starts the venv's python by a relative path and so survives the move.
build_schemathesis() {
  local dir
  dir="$(schemathesis_dir)"
  rm -rf "$dir.tmp"
  log "installing schemathesis $SCHEMATHESIS_VERSION from PyPI into a virtual environment"
  python3 -m venv "$dir.tmp/venv"
  "$dir.tmp/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "schemathesis==$SCHEMATHESIS_VERSION" >&2
  mkdir -p "$dir.tmp/bin"
  printf '#!/bin/sh\nexec "$(dirname "$0")/../venv/bin/python" -m schemathesis.cli "$@"\n' >"$dir.tmp/bin/schemathesis"
  chmod +x "$dir.tmp/bin/schemathesis"
  rm -rf "$dir"
  mv "$dir.tmp" "$dir"
}

prepare_authzen_clients() {
  prepare_schemathesis
  if command -v cargo >/dev/null 2>&1; then return; fi
  log "cargo is missing, so the AuthZEN client test's enforcement points cannot be built: install Rust (rustup)"
  exit 1
}

# Each enforcement point's sources pin its library at the version versions.env names.
require_pin() {
  local file="$1" line="$2"
  if grep -qxF "$line" "$file"; then return; fi
  log "$file does not pin \"$line\" (hack/tools/versions.env)"
  exit 1
}

# The enforcement points of the AuthZEN client test, from the repository's sources: the Rust one with its
# Cargo.lock (--locked; cargo's target folder stays in the cache, so a change rebuilds only the program), the
# Python one in a virtual environment of its own with its script beside it (bin/ starts it by relative paths).
build_authzen_clients() {
  local dir sources
  dir="$(authzen_clients_dir)"
  sources="$(authzen_clients_sources)"
  require_pin "$sources/openidauthzen/Cargo.toml" \
    "openidauthzen = { version = \"=$OPENIDAUTHZEN_VERSION\", default-features = false }"
  require_pin "$sources/empowernow/requirements.txt" "empowernow-sdk==$EMPOWERNOW_SDK_VERSION"
  rm -rf "$dir.tmp"
  log "building the enforcement point on openidauthzen $OPENIDAUTHZEN_VERSION (crates.io)"
  cargo build --quiet --release --locked --manifest-path "$sources/openidauthzen/Cargo.toml" \
    --target-dir "$TOOLS_CACHE/src/authzen-clients-target" >&2
  mkdir -p "$dir.tmp/bin" "$dir.tmp/empowernow"
  cp "$TOOLS_CACHE/src/authzen-clients-target/release/openidauthzen-pep" "$dir.tmp/bin/"
  log "installing empowernow-sdk $EMPOWERNOW_SDK_VERSION from PyPI into a virtual environment"
  python3 -m venv "$dir.tmp/empowernow/venv"
  "$dir.tmp/empowernow/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
    -r "$sources/empowernow/requirements.txt" >&2
  cp "$sources/empowernow/pep.py" "$dir.tmp/empowernow/"
  printf '#!/bin/sh\nhere="$(dirname "$0")/../empowernow"\nexec "$here/venv/bin/python" "$here/pep.py" "$@"\n' \
    >"$dir.tmp/bin/empowernow-pep"
  chmod +x "$dir.tmp/bin/empowernow-pep"
  rm -rf "$dir"
  mv "$dir.tmp" "$dir"
}

# A tool that is not a Go module declares its own prerequisites as `prepare_<tool>`.
ensure() {
  local tool="$1" dir
  dir="$("${tool}_dir")"
  if [ -d "$dir" ]; then return; fi
  if declare -F "prepare_$tool" >/dev/null; then "prepare_$tool"; else require_go; fi
  local started=$SECONDS
  log "building $tool into $dir"
  "build_$tool"
  log "built $tool in $((SECONDS - started))s"
}

# Two runs on one machine (a test run and npm start, two checkouts) would build into the same folders:
# the second waits for the first, then finds its binaries.
hold_cache_lock() {
  command -v flock >/dev/null 2>&1 || return 0
  exec 9>"$TOOLS_CACHE/.build.lock"
  if ! flock -n 9; then
    log "another build of the tools is running; waiting for it"
    flock 9
  fi
}

main() {
  local tools=("$@")
  [ ${#tools[@]} -gt 0 ] || tools=(kubernetes etcd spicedb helm schemathesis authzen_clients)
  if [ "${tools[*]}" = cluster ]; then
    tools=(kubernetes etcd spicedb helm schemathesis authzen_clients kubernetes_node coredns pause node_packages)
  fi
  if [ "${tools[*]}" = gateway ]; then tools=(gateway_packages); fi
  mkdir -p "$TOOLS_CACHE"
  hold_cache_lock
  for tool in "${tools[@]}"; do ensure "$tool"; done
  mkdir -p "$(assets_dir)"
  ln -sf "$(kubernetes_dir)/kube-apiserver" "$(kubernetes_dir)/kubectl" "$(etcd_dir)/etcd" "$(assets_dir)/" 2>/dev/null || true
}

main "$@"
