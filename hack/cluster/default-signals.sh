# Sourced first by hack/cluster/cluster.sh: a script started in the background by a non-interactive shell
# (`cluster.sh up &`) inherits SIGINT and SIGQUIT ignored, and bash can neither trap nor reset a signal that was
# ignored when it started, so Ctrl-C and `kill -INT` would not stop it. The script then starts itself again, once,
# with them at their defaults (coreutils' env --default-signal), and its traps work.
if [ -z "${POLICY_GRANT_DEFAULT_SIGNALS:-}" ]; then
  POLICY_GRANT_DEFAULT_SIGNALS=1 exec env --default-signal=INT,QUIT "$BASH" "$0" "$@"
fi
