// The acl.policygrant.dev/v1alpha1 API: resource names, zod schemas (the source of truth for the CRDs
// and the TypeScript types), and the small pure helpers that the services share.
export * from './group-version.js';
export * from './conditions.js';
export * from './cross-field-rules.js';
export * from './enforced-condition.js';
export * from './ready-condition.js';
export * from './policy-grant.js';
export * from './policy-grant-state.js';
export * from './policy-grant-access.js';
export * from './catalog-item.js';
export * from './membership.js';
export * from './grant-claim.js';
export * from './delegation.js';
export * from './access-request.js';
export * from './crds.js';
export type { StructuralSchema } from './structural-schema.js';
