# shellcheck shell=bash
# The production topology of docs/install.md ("Production"), as hack/chart-e2e.sh installs it with SHAPE=production:
# functions only, sourced by that script (its k, log, install_postgres, common values and variables).
spicedb_namespace=spicedb

# PostgreSQL with track_commit_timestamp (SpiceDB's Watch needs it) and max_connections sized for the pools
# (docs/install.md, "Connections"); SpiceDB's owner, and the read-only SpiceDB's role: SELECT on what SpiceDB's
# owner creates, granted ahead through default privileges, so that it covers the tables the migrations create.
install_production_postgres() {
  spicedb_password="$(openssl rand -hex 16)"
  reader_password="$(openssl rand -hex 16)"
  install_postgres spicedb "$(spicedb_roles_sql)" -c track_commit_timestamp=on -c max_connections=200
}

# One statement per line, run in the database `spicedb`.
spicedb_roles_sql() {
  cat <<EOF
CREATE ROLE spicedb LOGIN PASSWORD '$spicedb_password';
ALTER DATABASE spicedb OWNER TO spicedb;
CREATE ROLE spicedb_reader LOGIN PASSWORD '$reader_password';
GRANT CONNECT ON DATABASE spicedb TO spicedb_reader;
GRANT USAGE ON SCHEMA public TO spicedb_reader;
ALTER DEFAULT PRIVILEGES FOR ROLE spicedb IN SCHEMA public GRANT SELECT ON TABLES TO spicedb_reader;
CREATE DATABASE audit;
EOF
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
    --from-literal=datastore-uri="postgres://spicedb:$spicedb_password@$host/spicedb" \
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
  k --namespace "$namespace" create secret generic spicedb \
    --from-literal=endpoint="spicedb.$spicedb_namespace.svc:50051" --from-literal=presharedKey="$key"
  k --namespace "$namespace" create secret generic spicedb-datastore \
    --from-literal=uri="postgres://spicedb_reader:$reader_password@$host/spicedb"
  k --namespace "$namespace" create secret generic spicedb-read-only --from-literal=presharedKey="$(openssl rand -hex 20)"
}

# The working tree's chart as docs/install.md installs it for production: the arguments after
# `helm install|upgrade <release> <chart>` (examples/production.yaml, the cluster's images, the test's issuer).
production_args=()
production_chart_args() {
  production_args=(-f "$chart/examples/production.yaml" "${image_values[@]}"
    --set spicedb.readOnly.image.repository="$(image_repository "$spicedb_image")"
    --set spicedb.readOnly.image.tag="$(image_tag "$spicedb_image")"
    "${auth_values[@]}" --set auth.jwks.url=)
}

# The release before this one: the chart as of this commit of main (the last before the production values and
# the read-only SpiceDB's own image, Watch heartbeat and pools), with the values it knows for this topology, on
# the working tree's image. The upgrade test (test/install/upgrade) moves it to production_args.
previous_chart_commit=2f05dd96f37c60506e1d6b397185c39e153f2059

install_previous_chart() {
  local previous="$work/previous"
  mkdir -p "$previous"
  git -C "$repo" archive "$previous_chart_commit" charts/policy-grant-operator | tar -x -C "$previous"
  log "installing the previous chart (main at ${previous_chart_commit:0:7}) into $namespace"
  k label namespace "$namespace" pod-security.kubernetes.io/enforce=restricted pod-security.kubernetes.io/warn=restricted
  "$helm" install "$release" "$previous/charts/policy-grant-operator" \
    --kubeconfig "$KUBECONFIG" --namespace "$namespace" \
    "${image_values[@]}" "${auth_values[@]}" \
    --set spicedb.existingSecret=spicedb --set spicedb.tls.enabled=false \
    --set spicedb.readOnly.datastore.existingSecret=spicedb-datastore \
    --set spicedb.readOnly.existingSecret=spicedb-read-only \
    --set spicedb.bundled.image.repository="$(image_repository "$spicedb_image")" \
    --set spicedb.bundled.image.tag="$(image_tag "$spicedb_image")" \
    --set decisionService.replicas=3 --set networkPolicy.enabled=true \
    --wait --timeout 10m
}

install_production() {
  [ -n "$spicedb_image" ] || die "SHAPE=production needs SPICEDB_IMAGE"
  production_chart_args
  install_production_postgres
  install_production_spicedb
  install_previous_chart
}
