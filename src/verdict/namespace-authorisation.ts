/** The label that binds a namespace to an organisation (docs/architecture.md, "Custom resources"). */
export const ORGANISATION_LABEL = 'acl.policygrant.dev/organisation';

export type NamespaceAuthorisation = { authorised: true } | { authorised: false; message: string };

/**
 * The GitOps guard (docs/architecture.md, "Security"): a grant counts only in the ACL API's own namespace,
 * whose writes went through the API's ownership checks, or in a namespace bound to the item's organisation,
 * whose writers the cluster admin has chosen for that organisation. Anywhere else kubectl could grant
 * anything.
 */
export function authoriseNamespace(input: {
  grantNamespace: string;
  aclNamespace: string;
  /** The organisation the grant's namespace is bound to, if any. */
  namespaceOrganisation: string | undefined;
  itemOrganisation: string;
}): NamespaceAuthorisation {
  const { grantNamespace, aclNamespace, namespaceOrganisation, itemOrganisation } = input;
  if (grantNamespace === aclNamespace || namespaceOrganisation === itemOrganisation)
    return { authorised: true };
  const binding =
    namespaceOrganisation === undefined
      ? `namespace "${grantNamespace}" is not bound to an organisation (label ${ORGANISATION_LABEL})`
      : `namespace "${grantNamespace}" is bound to organisation ${namespaceOrganisation}`;
  return {
    authorised: false,
    message:
      `${binding}; grants on this item are enforced only in namespace "${aclNamespace}" or in a namespace ` +
      `labelled ${ORGANISATION_LABEL}=${itemOrganisation}`,
  };
}
