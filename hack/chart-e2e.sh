#!/usr/bin/env bash
# The chart's install suite, on any cluster KUBECONFIG names (hack/kind-e2e.sh on kind, hack/cluster/cluster.sh
# test on this project's one-node cluster), in one of two shapes (SHAPE):
# - bundled (default): PostgreSQL for the audit trail, the Helm chart with the bundled SpiceDB in a namespace that
#   enforces Pod Security "restricted", then the end-to-end suite (`npm run test:e2e`) through port-forwards, the
#   install suite (test/install: the controller's leader failover by deleting its pod, a `helm upgrade` that rolls
#   the decision service under checks);
# - production: the production topology as docs/production.md installs it: PostgreSQL with
#   track_commit_timestamp, SpiceDB on it at two replicas with dispatch (config/production), the previous release
#   of the chart, which the install suite's upgrade test moves to this chart with examples/production.yaml (a
#   read-only SpiceDB for the decision service, several replicas of everything) under checks, then the production
#   install suite (test/install/production: freshness through every decision replica, faults, disaster recovery);
# then `helm test`, and `helm uninstall`, after which only the documented leftovers may remain. The images must be
# in the cluster already.
#
# Environment:
#   KUBECONFIG       the cluster (required)
#   SHAPE            bundled (default) or production
#   IMAGE            the project's image (default policy-grant-operator:e2e; pullPolicy Never)
#   POSTGRES_IMAGE   PostgreSQL image for the audit trail (default postgres:18)
#   SPICEDB_IMAGE    the bundled SpiceDB's image, pullPolicy Never (default: the chart's, pulled)
#   PULL_POLICY      of the PostgreSQL image (default IfNotPresent)
#   HELM_BIN, KUBECTL_BIN  helm and kubectl to use (default: on PATH, else the pinned builds of hack/tools)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=hack/image-reference.sh
source "$repo/hack/image-reference.sh"
# shellcheck source=hack/production-topology.sh
source "$repo/hack/production-topology.sh"
: "${KUBECONFIG:?KUBECONFIG must name the cluster}"
image="${IMAGE:-policy-grant-operator:e2e}"
spicedb_image="${SPICEDB_IMAGE:-}"
postgres_image="${POSTGRES_IMAGE:-postgres:18}"
pull_policy="${PULL_POLICY:-IfNotPresent}"
shape="${SHAPE:-bundled}"
release=policy-grant-operator
namespace=policy-grant-system
db_namespace=policy-grant-db
chart="$repo/charts/policy-grant-operator"
work="$(mktemp -d "${TMPDIR:-/tmp}/policy-grant-chart-e2e.XXXXXX")"
forwards=()
# host:port of each service (write_env_file), by component.
declare -A service_addresses=()

log() { printf '[chart-e2e] %s\n' "$*" >&2; }
die() {
  log "$*"
  exit 1
}

cleanup() {
  local status=$?
  for pid in "${forwards[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT

# helm and kubectl: explicit, on PATH, or the project's pinned builds (which need Go, once).
resolve_tools() {
  helm="${HELM_BIN:-$(command -v helm || true)}"
  kubectl="${KUBECTL_BIN:-$(command -v kubectl || true)}"
  if [ -z "$helm" ] || [ -z "$kubectl" ]; then
    log "helm or kubectl not found: building the pinned ones (hack/tools)"
    eval "$(cd "$repo" && npm run --silent tools:env)"
    helm="$HELM_BIN"
    kubectl="$KUBECTL_BIN"
  fi
  export KUBECTL_BIN="$kubectl" HELM_BIN="$helm"
}

k() { "$kubectl" --kubeconfig "$KUBECONFIG" "$@"; }

# The suite mints its tokens with the development signing key in .dev/ (created when missing); the services
# trust that key's public JWKS, with the development issuer and audience.
ensure_dev_signing_key() {
  (cd "$repo" && npm run --silent token -- --sub 00000000-0000-4000-8000-000000000000 >/dev/null)
  [ -f "$repo/.dev/jwks.json" ] || die "npm run token did not write .dev/jwks.json"
}

# Its arguments as a YAML flow sequence of quoted strings.
yaml_list() {
  local out=""
  for item in "$@"; do out+="${out:+, }\"$item\""; done
  printf '[%s]' "$out"
}

# PostgreSQL, with an init script in /docker-entrypoint-initdb.d run on first start (the official image's
# interface, which the one-node cluster's PostgreSQL image offers too: one statement per line, in the database
# POSTGRES_DB), so that the image needs no client tools. Arguments: that database, the script, and PostgreSQL's own
# arguments.
install_postgres() {
  local database="$1" init_sql="$2"
  shift 2
  postgres_password="$(openssl rand -hex 16)"
  log "running PostgreSQL ($postgres_image) in $db_namespace"
  k create namespace "$db_namespace"
  k --namespace "$db_namespace" create secret generic postgres --from-literal=password="$postgres_password"
  k --namespace "$db_namespace" create secret generic postgres-init --from-literal=init.sql="$init_sql"
  k --namespace "$db_namespace" apply -f - <<EOF
apiVersion: apps/v1
kind: Deployment
metadata:
  name: postgres
spec:
  replicas: 1
  selector:
    matchLabels: { app: postgres }
  template:
    metadata:
      labels: { app: postgres }
    spec:
      containers:
        - name: postgres
          image: $postgres_image
          imagePullPolicy: $pull_policy
          args: $(yaml_list "$@")
          env:
            - name: POSTGRES_PASSWORD
              valueFrom: { secretKeyRef: { name: postgres, key: password } }
            - name: POSTGRES_DB
              value: $database
          ports:
            - containerPort: 5432
          readinessProbe:
            tcpSocket: { port: 5432 }
            periodSeconds: 2
          volumeMounts:
            - { name: data, mountPath: /var/lib/postgresql }
            - { name: init, mountPath: /docker-entrypoint-initdb.d, readOnly: true }
      volumes:
        - { name: data, emptyDir: {} }
        - { name: init, secret: { secretName: postgres-init } }
---
apiVersion: v1
kind: Service
metadata:
  name: postgres
spec:
  selector: { app: postgres }
  ports:
    - port: 5432
EOF
  k --namespace "$db_namespace" rollout status deployment/postgres --timeout 5m
  k create namespace "$namespace"
}

# The audit trail's Secrets in the release namespace: the services' connection string (url) and the schema
# owner's (migrationUrl), then the chain key.
audit_secrets() {
  k --namespace "$namespace" create secret generic "$release-audit-database" \
    --from-literal=url="$1" --from-literal=migrationUrl="$2"
  k --namespace "$namespace" create secret generic "$release-audit-chain-key" \
    --from-literal=key="$(openssl rand -base64 48)"
}

# The audit trail's PostgreSQL for the bundled shape: its superuser owns the schema (the migrations run as it), and
# the services connect as acl_api, a member of policy_grant_audit_writer (INSERT and SELECT only).
install_audit_postgres() {
  local service_password host="postgres.$db_namespace.svc:5432"
  service_password="$(openssl rand -hex 16)"
  install_postgres audit "CREATE ROLE policy_grant_audit_writer NOLOGIN;
CREATE ROLE acl_api LOGIN PASSWORD '$service_password' IN ROLE policy_grant_audit_writer;
"
  audit_secrets "postgres://acl_api:$service_password@$host/audit" "postgres://postgres:$postgres_password@$host/audit"
}

install_chart() {
  log "installing the chart into $namespace (Pod Security restricted, bundled SpiceDB)"
  k label namespace "$namespace" pod-security.kubernetes.io/enforce=restricted pod-security.kubernetes.io/warn=restricted
  "$helm" install "$release" "$chart" \
    --kubeconfig "$KUBECONFIG" --namespace "$namespace" \
    "${image_values[@]}" \
    ${spicedb_image:+--set spicedb.bundled.image.repository="$(image_repository "$spicedb_image")"} \
    ${spicedb_image:+--set spicedb.bundled.image.tag="$(image_tag "$spicedb_image")" --set spicedb.bundled.image.pullPolicy=Never} \
    --set spicedb.bundled.enabled=true --set spicedb.presharedKey="$(openssl rand -hex 20)" \
    "${auth_values[@]}" \
    --wait --timeout 5m
}

# The project's image, and the identity provider of the development stack's tokens: both shapes.
image_values=()
auth_values=()
common_values() {
  image_values=(--set image.repository="$(image_repository "$image")" --set image.tag="$(image_tag "$image")"
    --set image.pullPolicy=Never)
  auth_values=(--set auth.jwt.issuer=policy-grant-operator-dev --set auth.jwt.audience=policy-grant-operator
    --set-file auth.jwks.inline="$repo/.dev/jwks.json")
}

# Starts `kubectl port-forward service/<name> :<port>` in the background and stores the local port it chose in
# the variable named by $3 (no command substitution: the port-forward must be this shell's child to be stopped).
forward() {
  local service="$1" port="$2" output="$work/forward-$1.log" local_port=""
  : >"$output"
  # kubectl itself in the background (not through k): $! must be the port-forward, not a subshell around it.
  "$kubectl" --kubeconfig "$KUBECONFIG" --namespace "$namespace" port-forward "service/$service" ":$port" >>"$output" 2>&1 &
  forwards+=("$!")
  for _ in $(seq 1 100); do
    local_port="$(sed -nE 's/^Forwarding from 127\.0\.0\.1:([0-9]+) -> .*/\1/p' "$output" | head -n 1)"
    [ -n "$local_port" ] && break
    sleep 0.1
  done
  [ -n "$local_port" ] || die "port-forward to $service did not start: $(cat "$output")"
  printf -v "$3" '%s' "$local_port"
}

# Stores host:port of a Service of the release in the variable named by $3: a port-forward's local end, or with
# SHAPE=production the Service's cluster address, which this script reaches from the node (a port-forward holds to
# one pod, and the production suite deletes and replaces pods).
reach() {
  # Not named local_port: forward's own local of that name would take the value it stores (bash's dynamic scope).
  local service="$1" port="$2" forwarded=""
  if [ "$shape" = production ]; then
    printf -v "$3" '%s:%s' "$(k --namespace "$namespace" get service "$service" -o jsonpath='{.spec.clusterIP}')" "$port"
    return
  fi
  forward "$service" "$port" forwarded
  printf -v "$3" '127.0.0.1:%s' "$forwarded"
}

# The NAME=value file the suite reads (E2E_ENV_FILE), as the development stack writes .dev/env.
write_env_file() {
  local acl decision controller spicedb token
  reach "$release-acl-api" 8080 acl
  reach "$release-decision-service" 8081 decision
  reach "$release-controller" 8082 controller
  # The SpiceDB the decision service reads: the bundled one, or the read-only one (its reads are the datastore's).
  local spicedb_service="$release-spicedb" spicedb_secret="$release-spicedb"
  if [ "$shape" = production ]; then
    spicedb_service="$release-spicedb-read-only"
    spicedb_secret=spicedb-read-only
  fi
  reach "$spicedb_service" 50051 spicedb
  service_addresses=([acl-api]="$acl" [decision-service]="$decision" [controller]="$controller")
  token="$(k --namespace "$namespace" get secret "$spicedb_secret" -o jsonpath='{.data.presharedKey}' | base64 --decode)"
  cat >"$work/env" <<EOF
KUBECONFIG=$KUBECONFIG
ACL_URL=http://$acl/v2
DECISION_URL=http://$decision
CONTROLLER_URL=http://$controller
SPICEDB_ENDPOINT=$spicedb
SPICEDB_TOKEN=$token
NAMESPACE=$namespace
EOF
  chmod 600 "$work/env"
}

diagnose() {
  log "the suite failed; the installed release:"
  k --namespace "$namespace" get pods,services,policygrants -o wide >&2 || true
  for component in acl-api controller decision-service spicedb spicedb-read-only; do
    log "logs of $release-$component:"
    k --namespace "$namespace" logs "deployment/$release-$component" --all-containers --tail 50 >&2 || true
  done
  if [ "$shape" = production ]; then
    log "logs of SpiceDB in $spicedb_namespace:"
    k --namespace "$spicedb_namespace" logs deployment/spicedb --all-containers --tail 50 >&2 || true
  fi
  log "logs of PostgreSQL:"
  k --namespace "$db_namespace" logs deployment/postgres --tail 50 >&2 || true
}

# The sample CatalogItems the suite grants access to, as the development stack applies them.
apply_samples() {
  k apply -f "$repo/config/samples/acl_v1alpha1_catalogitem.yaml"
}

# The chart's roles for users reach the cluster's own `view` through aggregation (kube-controller-manager's
# clusterrole-aggregation controller): a user bound only to `view` reads grants and cannot write one.
check_view_role() {
  local user="viewer@example.com" answer=""
  k --namespace "$namespace" create rolebinding e2e-viewer --clusterrole=view --user="$user"
  for _ in $(seq 1 100); do
    answer="$(k --namespace "$namespace" auth can-i list policygrants.acl.policygrant.dev --as "$user" || true)"
    [ "$answer" = yes ] && break
    sleep 0.2
  done
  [ "$answer" = yes ] || die "a user bound to view cannot list policygrants"
  answer="$(k --namespace "$namespace" auth can-i create policygrants.acl.policygrant.dev --as "$user" || true)"
  [ "$answer" = no ] || die "a user bound to view can create policygrants"
  k --namespace "$namespace" delete rolebinding e2e-viewer
  log "a user bound only to view lists policygrants and cannot create one"
}

# Every pod of the release Ready, and each service's probes answering 200 on the chart's ports.
check_pods_and_probes() {
  local component probe status
  k --namespace "$namespace" wait pods --for=condition=Ready --selector "app.kubernetes.io/instance=$release" --timeout 5m >/dev/null
  for component in "${!service_addresses[@]}"; do
    for probe in live ready; do
      status="$(curl --silent --max-time 10 --output "$work/probe" --write-out '%{http_code}' \
        "http://${service_addresses[$component]}/healthz/$probe" || true)"
      [ "$status" = 200 ] ||
        die "$component: /healthz/$probe answers ${status:-nothing}, not 200: $(head -c 500 "$work/probe" 2>/dev/null)" \
          "$(tail -n 5 "$work/forward-$release-$component.log" 2>/dev/null)"
    done
  done
  log "every pod of the release is Ready; /healthz/live and /healthz/ready answer 200 on each service's port"
}

# The install suite's files for one shape of vitest.install.config.ts (bundled, upgrade, production).
run_install_suite() {
  local suite="$1"
  log "running the install suite ($suite)"
  (cd "$repo" && E2E_ENV_FILE="$work/env" INSTALL_SHAPE="$suite" INSTALL_RELEASE="$release" \
    INSTALL_UPGRADE_ARGS="$(printf '%s\n' "${production_args[@]}" | jq -R . | jq -s -c .)" \
    INSTALL_NAMESPACE="$namespace" INSTALL_DB_NAMESPACE="$db_namespace" INSTALL_SPICEDB_NAMESPACE="$spicedb_namespace" \
    INSTALL_CHART="$chart" npx vitest run --config vitest.install.config.ts)
}

# The suites of the shape: the bundled one runs the end-to-end suite too; the production one upgrades the previous
# release first.
run_suites() {
  if [ "$shape" = bundled ]; then
    log "running the end-to-end suite"
    (cd "$repo" && E2E_ENV_FILE="$work/env" npm run test:e2e) || return 1
    run_install_suite bundled
  else
    run_install_suite upgrade && run_install_suite production
  fi
}

run_helm_test() {
  "$helm" test "$release" --kubeconfig "$KUBECONFIG" --namespace "$namespace" --timeout 5m >&2
  log "helm test passed"
}

# What `helm uninstall` leaves, by design (docs/upgrade.md, "Uninstalling"): the CRDs (crds.keep) and the
# objects of the API group, among them every grant; the controller's leader-election Lease, which it creates at
# run time; the Secrets the installer created beside the release; and what every namespace has.
KEPT_AFTER_UNINSTALL='^(customresourcedefinition\.apiextensions\.k8s\.io/.*\.acl\.policygrant\.dev|[a-z]+\.acl\.policygrant\.dev/.*|lease\.coordination\.k8s\.io/'"$release"'-controller|secret/('"$release"'-audit-(database|chain-key)|spicedb|spicedb-datastore|spicedb-read-only)|configmap/kube-root-ca\.crt|serviceaccount/default|event(\.events\.k8s\.io)?/.*)$'

# Everything of the release's namespace, and every cluster-scoped object with the release's label.
remaining_objects() {
  local namespaced cluster
  namespaced="$(k api-resources --verbs=list --namespaced=true -o name | paste -sd, -)"
  cluster="$(k api-resources --verbs=list --namespaced=false -o name | paste -sd, -)"
  k --namespace "$namespace" get "$namespaced" -o name 2>/dev/null || true
  k get "$cluster" --selector "app.kubernetes.io/instance=$release" -o name 2>/dev/null || true
}

uninstall_and_check_leftovers() {
  local unexpected=""
  for pid in "${forwards[@]}"; do kill "$pid" 2>/dev/null || true; done
  forwards=()
  "$helm" uninstall "$release" --kubeconfig "$KUBECONFIG" --namespace "$namespace" --wait --timeout 5m >&2
  # Pods and ReplicaSets go through the garbage collector after their Deployment: give it a bounded while.
  for _ in $(seq 1 60); do
    unexpected="$(remaining_objects | grep -Ev "$KEPT_AFTER_UNINSTALL" || true)"
    [ -z "$unexpected" ] && break
    sleep 2
  done
  [ -z "$unexpected" ] || die "helm uninstall left objects the docs do not name: $unexpected"
  log "helm uninstall left only the documented objects: $(remaining_objects | grep -Ec "$KEPT_AFTER_UNINSTALL") (CRDs, grants and other objects of the group, the controller's Lease, the installer's Secrets)"
}

main() {
  resolve_tools
  ensure_dev_signing_key
  common_values
  case "$shape" in
    bundled)
      install_audit_postgres
      install_chart
      ;;
    production) install_production ;;
    *) die "SHAPE must be bundled or production, not $shape" ;;
  esac
  apply_samples
  check_view_role
  write_env_file
  check_pods_and_probes
  if ! run_suites; then
    diagnose
    exit 1
  fi
  log "the $shape suites passed"
  run_helm_test
  uninstall_and_check_leftovers
}

main "$@"
