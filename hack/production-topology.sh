# shellcheck shell=bash
# The production topology of docs/production.md, as hack/chart-e2e.sh installs it with SHAPE=production:
# functions only, sourced by that script (its k, log, install_postgres, common values and variables).
spicedb_namespace=spicedb

# The SQL blocks of docs/production.md, "Roles, in an order that works", as an operator runs them: the first
# before anything else, the second in SpiceDB's database after its migrations. The page's passwords are the ones
# this script connects with.
production_sql() {
  awk -v want="$1" '/^```sql$/ { block++; inside = (block == want); next } /^```$/ { inside = 0; next } inside' \
    "$repo/docs/production.md"
}

# PostgreSQL as docs/production.md sets it up: track_commit_timestamp (SpiceDB's Watch), max_connections sized
# for the pools ("Connections"), the roles and databases of the first block on first start.
install_production_postgres() {
  local host="postgres.$db_namespace.svc:5432"
  install_postgres postgres "$(production_sql 1)" -c track_commit_timestamp=on -c max_connections=150
  audit_secrets "postgres://acl_api:acl-api-password@$host/audit" \
    "postgres://audit_owner:audit-owner-password@$host/audit"
}

# SQL as PostgreSQL's superuser, in a database, from this machine (the image has no psql): the project's pg client
# at the postgres Service's cluster address.
run_sql() {
  local database="$1" sql="$2" host
  host="$(k --namespace "$db_namespace" get service postgres -o jsonpath='{.spec.clusterIP}')"
  (cd "$repo" && PGHOST="$host" PGUSER=postgres PGPASSWORD="$postgres_password" PGDATABASE="$database" SQL="$sql" \
    node --input-type=module -e "
      import pg from 'pg';
      const client = new pg.Client();
      await client.connect();
      for (const statement of process.env.SQL.split('\n').filter((line) => line.trim())) await client.query(statement);
      await client.end();")
}

# SpiceDB on PostgreSQL: `kubectl apply -k config/production` through an overlay that names the cluster's SpiceDB
# image (kustomize's `images:`, as for a private registry; kustomize takes a base by relative path only); then the release namespace's Secrets for it: the
# controller's (endpoint, writing key) and the read-only SpiceDB's (its datastore as spicedb_reader, its own key).
install_production_spicedb() {
  local key overlay="$work/spicedb-overlay" host="postgres.$db_namespace.svc:5432"
  key="$(openssl rand -hex 20)"
  log "running SpiceDB on PostgreSQL in $spicedb_namespace (config/production)"
  k create namespace "$spicedb_namespace"
  k --namespace "$spicedb_namespace" create secret generic spicedb \
    --from-literal=datastore-uri="postgres://spicedb:spicedb-owner-password@$host/spicedb" \
    --from-literal=preshared-key="$key"
  mkdir -p "$overlay"
  cat >"$overlay/kustomization.yaml" <<EOF
resources: [$(realpath --relative-to="$overlay" "$repo/config/production")]
images:
  - name: authzed/spicedb
    newName: $(image_repository "$spicedb_image")
    newTag: $(image_tag "$spicedb_image")
EOF
  k apply -k "$overlay"
  k --namespace "$spicedb_namespace" rollout status deployment/spicedb --timeout 10m
  run_sql spicedb "$(production_sql 2)"
  k --namespace "$namespace" create secret generic spicedb \
    --from-literal=endpoint="spicedb.$spicedb_namespace.svc:50051" --from-literal=presharedKey="$key"
  k --namespace "$namespace" create secret generic spicedb-datastore \
    --from-literal=uri="postgres://spicedb_reader:spicedb-reader-password@$host/spicedb"
  k --namespace "$namespace" create secret generic spicedb-read-only --from-literal=presharedKey="$(openssl rand -hex 20)"
}

# A chart as docs/production.md installs it: the arguments after `helm install|upgrade <release> <chart>`
# (its examples/production.yaml, the cluster's images, the test's issuer).
chart_production_args() {
  local chart_dir="$1"
  printf '%s\n' -f "$chart_dir/examples/production.yaml" "${image_values[@]}" \
    --set spicedb.readOnly.image.repository="$(image_repository "$spicedb_image")" \
    --set spicedb.readOnly.image.tag="$(image_tag "$spicedb_image")" \
    "${auth_values[@]}" --set auth.jwks.url=
}

# The working tree's chart, as the upgrade test (test/install/upgrade) moves the previous release to it. Both
# releases run the working tree's image, so a pod annotation stands for the new image tag a release brings: every
# Deployment rolls, as in a real upgrade.
production_args=()
production_chart_args() {
  mapfile -t production_args < <(chart_production_args "$chart")
  local component
  for component in aclApi controller decisionService; do
    production_args+=(--set "$component.podAnnotations.policygrant\.dev/release=upgraded")
  done
}

# The release before this one: the chart as of this commit of main, installed with its own production example. It
# runs the working tree's image, not one built from that commit: building the project's image a second time costs
# minutes of the run's budget, and what the upgrade test guards is the chart's move (templates, values, the order
# the pods roll in) with the data kept in the cluster and the datastore, which the image of either side reads alike.
# It is the first chart whose read-only SpiceDB drains when it stops (a preStop sleep, a new replica rolled in
# before an old one goes): from an earlier one, the read-only SpiceDB's old pods stop at once, and a few checks in
# flight to them fail closed (docs/upgrade.md).
previous_chart_commit=ab8d4c5e5759c817287b1fbe57bf0c7ffe6ec4ce

# The commit must be in the repository's history, which a shallow clone (git clone --depth) lacks: checked before
# anything is installed.
require_previous_chart() {
  git -C "$repo" cat-file -e "$previous_chart_commit^{commit}" 2>/dev/null ||
    die "the upgrade test installs the chart as of commit $previous_chart_commit, which this clone lacks" \
      "(a shallow clone?): run it in a full clone, or fetch that commit (git fetch --unshallow)"
}

install_previous_chart() {
  local previous="$work/previous" args
  mkdir -p "$previous"
  git -C "$repo" archive "$previous_chart_commit" charts/policy-grant-operator | tar -x -C "$previous"
  log "installing the previous chart (main at ${previous_chart_commit:0:7}) into $namespace"
  k label namespace "$namespace" pod-security.kubernetes.io/enforce=restricted pod-security.kubernetes.io/warn=restricted
  mapfile -t args < <(chart_production_args "$previous/charts/policy-grant-operator")
  "$helm" install "$release" "$previous/charts/policy-grant-operator" \
    --kubeconfig "$KUBECONFIG" --namespace "$namespace" "${args[@]}" --wait --timeout 10m
}

install_production() {
  [ -n "$spicedb_image" ] || die "SHAPE=production needs SPICEDB_IMAGE"
  require_previous_chart
  production_chart_args
  install_production_postgres
  install_production_spicedb
  install_previous_chart
}
