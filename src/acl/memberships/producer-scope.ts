import { boundOrganisations, hasRole, type Principal } from '../../auth/principal.js';
import { HttpError } from '../../http/errors.js';
import { COS_ADMIN } from '../authorisation.js';

/** The role of the systems that report memberships of their own organisations (identity providers, HR feeds). */
export const EVENT_PRODUCER = 'event_producer';
/** The role of a feed that reports memberships of every organisation (a platform-wide identity provider). */
export const PLATFORM_EVENT_PRODUCER = 'platform_event_producer';

/** The organisation an event or snapshot is about, and where the request names it (`[2].data.organisationId`). */
export interface NamedOrganisation {
  organisationId: string;
  field: string;
}

/**
 * The organisations a caller may report memberships for: every one for cos_admin and platform producers; for an
 * event producer, the token's organisation claim (a JWT) or the credential's `organisations` (a Basic
 * application), and nothing when it has none. A member added by a producer gains every GROUP grant of that
 * organisation, so a producer bound to nothing changes nothing.
 */
export function producerOrganisations(principal: Principal): 'every' | ReadonlySet<string> {
  if (hasRole(principal, COS_ADMIN) || hasRole(principal, PLATFORM_EVENT_PRODUCER)) return 'every';
  return boundOrganisations(principal);
}

/**
 * 403 naming the first organisation of `named` the caller may not speak for. It runs before anything is written,
 * so one foreign event refuses its whole batch.
 */
export function requireSpeaksFor(principal: Principal, named: readonly NamedOrganisation[]): void {
  const allowed = producerOrganisations(principal);
  if (allowed === 'every') return;
  const foreign = named.find(({ organisationId }) => !allowed.has(organisationId));
  if (foreign === undefined) return;
  throw new HttpError(
    'Forbidden',
    `${foreign.field}: this producer is not bound to organisation ${foreign.organisationId}; nothing was applied`,
    { title: 'Not bound to the organisation' },
  );
}
