// The field managers the services write Kubernetes objects as (metadata.managedFields names them), so the
// controller can tell a grant change the ACL API made (and audited) from one made with kubectl or GitOps.

/** Every create, update and patch of the ACL API. */
export const ACL_API_FIELD_MANAGER = 'policy-grant-acl-api';

/** Every update of the controller (finalizers, status). */
export const CONTROLLER_FIELD_MANAGER = 'policy-grant-controller';
