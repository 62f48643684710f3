import { z } from 'zod';
import { parsedWith } from './environment.js';
import { parseTrustedProxies } from './trusted-proxies.js';

/** Variables every service reads. */
export const commonEnvironment = z.object({
  /** A kubeconfig file; unset: the in-cluster ServiceAccount (loadKubeConfig). */
  KUBECONFIG: z.string().optional(),
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
   * The proxies in front trusted to name the client address (X-Forwarded-For), for the per-address limits of
   * failed authentications: their addresses and subnets, comma-separated. Unset: none, the peer counts.
   */
  TRUST_PROXY: parsedWith(parseTrustedProxies).optional(),
});
