/** `index` in hexadecimal, zero-padded to `digits`: ids that differ per object and stay the same per run. */
export const hex = (index: number, digits: number) => index.toString(16).padStart(digits, '0');

/** A timestamp as the API server writes one: whole seconds, UTC. */
export const isoSecond = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

/** One managedFields entry as the API server records an update by `manager`. */
function managedFieldsEntry(fieldsV1: object, manager: string, time: string, subresource?: string): object {
  return {
    manager,
    operation: 'Update',
    apiVersion: 'acl.policygrant.dev/v1alpha1',
    time,
    fieldsType: 'FieldsV1',
    fieldsV1,
    ...(subresource && { subresource }),
  };
}

/**
 * The managedFields of an object the ACL API made and the controller enforced: the API's fields, the
 * controller's finalizer, and the controller's status (conditions, observedGeneration, zedToken and `status`).
 */
export function enforcedManagedFields(aclApiFields: object, status: object, time: string): object[] {
  return [
    managedFieldsEntry(aclApiFields, 'policy-grant-acl-api', time),
    managedFieldsEntry(
      { 'f:metadata': { 'f:finalizers': { '.': {}, 'v:"acl.policygrant.dev/relationships"': {} } } },
      'policy-grant-controller',
      time,
    ),
    managedFieldsEntry(
      {
        'f:status': {
          '.': {},
          'f:conditions': { '.': {}, 'k:{"type":"Enforced"}': { '.': {}, 'f:lastTransitionTime': {} } },
          'f:observedGeneration': {},
          'f:zedToken': {},
          ...status,
        },
      },
      'policy-grant-controller',
      time,
      'status',
    ),
  ];
}
