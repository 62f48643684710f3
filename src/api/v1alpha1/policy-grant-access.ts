import type { PolicyGrantSpec } from './policy-grant.js';

/** The access types a grant gives, in the order of spec.constraints.access, each once. */
export function accessTypesOf(spec: Pick<PolicyGrantSpec, 'constraints'>): string[] {
  return [...new Set(spec.constraints.access.map((access) => access.accessType))];
}

/** The access types as kubectl shows them: `api,file` (`status.access`, the ACCESS column). */
export function accessTypesText(spec: Pick<PolicyGrantSpec, 'constraints'>): string {
  return accessTypesOf(spec).join(',');
}
