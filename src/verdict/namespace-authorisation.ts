/** The label that binds a namespace to an organisation (docs/architecture.md, "Custom resources"). */
export const ORGANISATION_LABEL = 'acl.policygrant.dev/organisation';

/**
 * What the verdict reads of a grant's namespace: the ACL API's own namespace (whatever its label), a namespace
 * bound to an organisation by its label, or one bound to none.
 */
export type NamespaceBinding =
  { kind: 'aclNamespace' } | { kind: 'bound'; organisationId: string } | { kind: 'unbound' };

export function namespaceBinding(input: {
  grantNamespace: string;
  aclNamespace: string;
  /** The organisation the namespace's label names, if any. */
  namespaceOrganisation: string | undefined;
}): NamespaceBinding {
  const { grantNamespace, aclNamespace, namespaceOrganisation } = input;
  if (grantNamespace === aclNamespace) return { kind: 'aclNamespace' };
  return namespaceOrganisation === undefined
    ? { kind: 'unbound' }
    : { kind: 'bound', organisationId: namespaceOrganisation };
}

/**
 * The binding as a PolicyGrant's status shows it (`status.namespaceBinding`, the BINDING column): the
 * organisation id, or a placeholder in angle brackets, which no label value can be (label values are
 * alphanumerics, `-`, `_` and `.`), so a placeholder is never taken for an organisation.
 */
export function namespaceBindingText(binding: NamespaceBinding): string {
  switch (binding.kind) {
    case 'aclNamespace':
      return '<acl-namespace>';
    case 'unbound':
      return '<unbound>';
    case 'bound':
      return binding.organisationId;
  }
}

export type NamespaceAuthorisation = { authorised: true } | { authorised: false; message: string };

/**
 * Namespace authorisation (docs/security.md, "Security"): a grant counts only in the ACL API's own namespace,
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
  const { grantNamespace, aclNamespace, itemOrganisation } = input;
  const binding = namespaceBinding(input);
  if (binding.kind === 'aclNamespace') return { authorised: true };
  if (binding.kind === 'bound' && binding.organisationId === itemOrganisation) return { authorised: true };
  const refusal =
    binding.kind === 'unbound'
      ? `namespace "${grantNamespace}" is not bound to an organisation (label ${ORGANISATION_LABEL})`
      : `namespace "${grantNamespace}" is bound to organisation ${binding.organisationId}`;
  return {
    authorised: false,
    message:
      `${refusal}; grants on this item are enforced only in namespace "${aclNamespace}" or in a namespace ` +
      `labelled ${ORGANISATION_LABEL}=${itemOrganisation}`,
  };
}
