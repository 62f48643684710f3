#!/usr/bin/env bash
# runc, as containerd's runtime binary (its `BinaryName`) on the test cluster only: it edits the OCI bundle's
# config.json before runc creates the container, then runs runc with the same arguments.
#
# Why: the machines this project is tested on run their processes without CAP_SYS_RESOURCE. The kubelet gives
# every pod sandbox an oom_score_adj of -998 (Guaranteed pods -997), and lowering an oom_score_adj below the
# caller's needs that capability, as does raising RLIMIT_NPROC: runc then fails with "can't get final child's
# PID from pipe". The shim clamps a negative oomScoreAdj to 0 and drops the RLIMIT_NPROC rlimit. It only makes
# the kernel's OOM killer treat pods like any other process; nothing else in the spec changes. A real node has
# CAP_SYS_RESOURCE and needs none of this, so the shim never leaves the test harness.
set -euo pipefail

RUNC="${RUNC_BINARY:-/usr/sbin/runc}"

# The bundle of `runc create|run`: --bundle/-b, else the current folder (runc's own default).
bundle_of() {
  local bundle=.
  while [ $# -gt 0 ]; do
    case "$1" in
      --bundle | -b) bundle="$2"; shift ;;
      --bundle=*) bundle="${1#--bundle=}" ;;
    esac
    shift
  done
  printf '%s' "$bundle"
}

adjust_spec() {
  local spec="$1/config.json" adjusted
  [ -f "$spec" ] || return 0
  adjusted="$(jq '
    if (.process.oomScoreAdj // 0) < 0 then .process.oomScoreAdj = 0 else . end
    | if .process.rlimits then .process.rlimits |= map(select(.type != "RLIMIT_NPROC")) else . end
  ' "$spec")"
  printf '%s\n' "$adjusted" >"$spec"
}

# Global flags come before the command and their values are paths or formats, never "create" or "run".
for arg in "$@"; do
  case "$arg" in
    create | run)
      adjust_spec "$(bundle_of "$@")"
      break
      ;;
  esac
done
exec "$RUNC" "$@"
