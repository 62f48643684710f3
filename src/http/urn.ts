/** How response `type` identifiers are spelled: `urn:<namespace>:<service>:<Kind>`. */
export interface UrnScheme {
  readonly namespace: string;
  readonly service: string;
}

export const DEFAULT_URN_NAMESPACE = 'dx';

const NAMESPACE_PATTERN = /^[a-z0-9][a-z0-9-]{0,30}[a-z0-9]$/i;
const SERVICE_PATTERN = /^[a-z][a-z0-9-]*$/i;

/** `service` is `acl` for the ACL API and `authz` for the decision service. */
export function createUrnScheme(service: string, namespace: string = DEFAULT_URN_NAMESPACE): UrnScheme {
  if (!NAMESPACE_PATTERN.test(namespace))
    throw new Error(`invalid URN namespace: ${JSON.stringify(namespace)}`);
  if (!SERVICE_PATTERN.test(service)) throw new Error(`invalid URN service name: ${JSON.stringify(service)}`);
  return { namespace, service };
}

export function urnOf(scheme: UrnScheme, kind: string): string {
  return `urn:${scheme.namespace}:${scheme.service}:${kind}`;
}
