#!/usr/bin/env bash
# Ensures the pinned tools are built, then prints `export NAME=value` lines for them.
# Usage: eval "$(npm run --silent tools:env)"
#        hack/tools/env.sh cluster   (also the one-node cluster's tools: KUBE_NODE_BIN_DIR, COREDNS_BIN, PAUSE_BIN)
#        hack/tools/env.sh gateway   (only the gateway test's nginx: NGINX_BIN, NGINX_JS_MODULE)
#        hack/tools/env.sh openfga   (only the benchmarks' OpenFGA)
# OPENFGA_BIN is exported whenever OpenFGA is built.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bash "$here/build.sh" "$@"
# shellcheck source=versions.env
source "$here/versions.env"
# shellcheck source=paths.sh
source "$here/paths.sh"
echo "export KUBEBUILDER_ASSETS=$(assets_dir)"
echo "export SPICEDB_BIN=$(spicedb_dir)/spicedb"
echo "export HELM_BIN=$(helm_dir)/helm"
echo "export KUBECTL_BIN=$(kubernetes_dir)/kubectl"
echo "export SCHEMATHESIS_BIN=$(schemathesis_dir)/bin/schemathesis"
echo "export OPENIDAUTHZEN_PEP_BIN=$(authzen_clients_dir)/bin/openidauthzen-pep"
echo "export EMPOWERNOW_PEP_BIN=$(authzen_clients_dir)/bin/empowernow-pep"
if [ "${1:-}" = cluster ]; then
  echo "export KUBE_NODE_BIN_DIR=$(kubernetes_node_dir)"
  echo "export COREDNS_BIN=$(coredns_dir)/coredns"
  echo "export PAUSE_BIN=$(pause_dir)/pause"
fi
if [ -x "$(openfga_dir)/openfga" ]; then echo "export OPENFGA_BIN=$(openfga_dir)/openfga"; fi
if [ "${1:-}" = gateway ]; then
  echo "export NGINX_BIN=/usr/sbin/nginx"
  echo "export NGINX_JS_MODULE=/usr/lib/nginx/modules/ngx_http_js_module.so"
fi
