import { z } from 'zod';
import { ConfigurationError } from '../../config/environment.js';

// Who made a grant change in Kubernetes (docs/audit-kubernetes.md, "Who made a change in Kubernetes"). A field manager is
// whatever the client wrote in `?fieldManager=`, so it never says who acted; the user the API server
// authenticated does, and an admission policy stamps it on the grant (REQUESTER_ANNOTATION), overwriting what
// the client sent. Actor ids carry a prefix with a colon: a user id is a UUID and a Basic client id has no colon,
// so no actor of a change made in Kubernetes is ever taken for a user's or an application's own action.

/**
 * The Kubernetes username of whoever created the grant or last changed its spec, as the admission policy
 * (charts/…/templates/grant-admission-policies.yaml) stamps it on every create and spec change of a PolicyGrant.
 */
export const REQUESTER_ANNOTATION = 'acl.policygrant.dev/changed-by';

/** The prefix of a requester the API server authenticated (the admission policy's stamp). */
export const VERIFIED_PREFIX = 'kubernetes:';
/** The prefix of a field manager, which the client chose: recorded when no stamp can be trusted. */
export const UNVERIFIED_PREFIX = 'unverified-field-manager:';
/**
 * The actor of a deletion. Kubernetes records no deleter on the object, and no admission policy can stamp one
 * (MutatingAdmissionPolicy does not match DELETE): the grant's stamp names whoever made its last spec, not who
 * deleted it.
 */
export const UNKNOWN_DELETER = 'unknown:deleter';

/**
 * Where the actor comes from. `admission`: the stamp, trusted because the admission policy is installed (and
 * refuses a stamp that is not the requester's); a stamped change by `aclApiUser` is the ACL API's own (it
 * recorded it). `field-manager`: no stamp is trusted, every change is recorded with its field manager marked
 * unverified, the ACL API's included (a field manager alone never makes a change the API's).
 */
export type ActorSource = { from: 'admission'; aclApiUser: string } | { from: 'field-manager' };

/** The controller's variables for the actor (its configuration spreads them in). */
export const actorEnvironment = z.object({
  AUDIT_ACTOR_FROM: z.enum(['admission', 'field-manager']).default('field-manager'),
  ACL_API_KUBERNETES_USER: z.string().min(1, 'must not be empty').optional(),
});

export function actorSource(env: z.output<typeof actorEnvironment>): ActorSource {
  if (env.AUDIT_ACTOR_FROM === 'field-manager') return { from: 'field-manager' };
  if (env.ACL_API_KUBERNETES_USER === undefined) {
    throw new ConfigurationError(
      'ACL_API_KUBERNETES_USER: AUDIT_ACTOR_FROM=admission needs the username the ACL API authenticates as',
    );
  }
  return { from: 'admission', aclApiUser: env.ACL_API_KUBERNETES_USER };
}

/** The grant's stamp, alone: what a cache of grants keeps of their annotations for the audit. */
export function requesterAnnotations(metadata: {
  annotations?: Record<string, string>;
}): Record<string, string> | undefined {
  const requester = metadata.annotations?.[REQUESTER_ANNOTATION];
  return requester === undefined ? undefined : { [REQUESTER_ANNOTATION]: requester };
}

/** Who made the grant's current state, as the audit records it. */
export interface ChangeActor {
  id: string;
  /** The ACL API made it (its own records say who asked): the controller records no creation or change. */
  aclApi: boolean;
}

/**
 * The actor of a grant change: the stamped requester when stamps are trusted and the grant has one, else its
 * latest field manager (`manager`), unverified. A grant made before the policy was installed has no stamp.
 */
export function changeActor(
  source: ActorSource,
  annotations: Record<string, string> | undefined,
  manager: string,
): ChangeActor {
  if (source.from === 'admission') {
    const requester = annotations?.[REQUESTER_ANNOTATION];
    if (requester !== undefined)
      return { id: `${VERIFIED_PREFIX}${requester}`, aclApi: requester === source.aclApiUser };
  }
  return { id: `${UNVERIFIED_PREFIX}${manager}`, aclApi: false };
}
