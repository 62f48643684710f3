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
  /**
   * Which proxies in front are trusted to name the client address (X-Forwarded-For), for the per-address
   * limit of failed authentications: a hop count, or addresses and subnets (comma-separated). Unset: none.
   */
  TRUST_PROXY: z
    .string()
    .transform((text): TrustProxy => (/^\d+$/.test(text) ? Number(text) : text))
    .optional(),
});

/** Express's `trust proxy` setting: hops, or a comma-separated list of addresses and subnets. */
export type TrustProxy = number | string;
