#!/usr/bin/env bash
# Uninstall runbook, last resort (docs/upgrade.md): removes the controller's finalizer
# acl.policygrant.dev/relationships from every object of the group acl.policygrant.dev that holds it (PolicyGrants,
# Memberships, Delegations and any kind added later), so that objects being deleted, their namespaces and the CRDs
# can go while no controller runs. Only that finalizer is removed; others stay.
#
# SpiceDB keeps the relationships of these objects: the controller would have removed them. Afterwards, either run
# a controller against that SpiceDB once (its resync deletes relationships no object accounts for) or retire the
# SpiceDB datastore.
#
# Usage: hack/release-finalizers.sh [namespace]     (default: every namespace)
# Environment: KUBECTL (default kubectl); kubectl's own KUBECONFIG and context apply.
set -euo pipefail

finalizer=acl.policygrant.dev/relationships
kubectl="${KUBECTL:-kubectl}"
if [ $# -gt 0 ]; then scope=(--namespace "$1"); else scope=(--all-namespaces); fi

# "<namespace> <name> <index of the finalizer>" for each object of a resource that holds it.
holders() {
  "$kubectl" get "$1" "${scope[@]}" -o go-template --template \
    '{{range .items}}{{$object := .}}{{range $index, $name := .metadata.finalizers}}{{if eq $name "'"$finalizer"'"}}{{$object.metadata.namespace}} {{$object.metadata.name}} {{$index}}{{"\n"}}{{end}}{{end}}{{end}}'
}

# The JSON patch tests that the entry is still the finalizer, so a concurrent change makes it fail, not remove
# another finalizer.
release() {
  local resource="$1" namespace="$2" name="$3" index="$4"
  "$kubectl" patch "$resource" "$name" --namespace "$namespace" --type json --patch \
    "[{\"op\":\"test\",\"path\":\"/metadata/finalizers/$index\",\"value\":\"$finalizer\"},{\"op\":\"remove\",\"path\":\"/metadata/finalizers/$index\"}]"
}

for resource in $("$kubectl" api-resources --api-group acl.policygrant.dev --namespaced=true -o name); do
  holders "$resource" | while read -r namespace name index; do
    release "$resource" "$namespace" "$name" "$index"
  done
done
