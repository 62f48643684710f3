import { z } from 'zod';

/** Variables every service reads. */
export const commonEnvironment = z.object({
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** The `<ns>` of `urn:<ns>:acl:<Kind>`, `urn:<ns>:authz:<Kind>` and `urn:<ns>:controller:<Kind>`. */
  ERROR_NAMESPACE: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,31}$/, 'lowercase letters, digits and dashes')
    .default('dx'),
  /** Where the ACL API writes grants; the controller enforces grants written there without a namespace binding. */
  ACL_NAMESPACE: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'a Kubernetes namespace name')
    .default('policy-grant-system'),
});

export type CommonConfig = z.output<typeof commonEnvironment>;
