# Sourced by hack/kind-e2e.sh. An image reference's repository and tag, for the chart's image.repository and
# image.tag. The tag follows the LAST colon after the last slash: a colon before a slash is a registry port
# (localhost:5001/policy-grant-operator:dev is repository localhost:5001/policy-grant-operator, tag dev). No tag
# means `latest`, as for docker.

image_repository() {
  local reference="$1"
  if [[ "${reference##*/}" == *:* ]]; then printf '%s\n' "${reference%:*}"; else printf '%s\n' "$reference"; fi
}

image_tag() {
  local name="${1##*/}"
  if [[ "$name" == *:* ]]; then printf '%s\n' "${name##*:}"; else printf 'latest\n'; fi
}
