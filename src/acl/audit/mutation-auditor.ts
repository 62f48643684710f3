import type { Counter, Registry as MetricsRegistry } from 'prom-client';
import type { Principal } from '../../auth/principal.js';
import { HttpError } from '../../http/errors.js';
import type { Logger } from '../../observability/logger.js';
import { counter } from '../../observability/metrics.js';
import type { ActorType, AuditEntry, AuditTarget } from '../../audit/audit-record.js';
import { POSTGRES_DEPENDENCY, type AuditStore } from '../../audit/audit-store.js';

/** One action as a route describes it; the auditor adds the actor, the outcome and the request id. */
export interface ActionDescription {
  action: string;
  target: AuditTarget;
  /** Overrides the outcome's detail (e.g. an event's applied/duplicate/stale). */
  detail?: string;
}

export interface Outcome {
  status: number;
  detail?: string;
}

/** What the audited routes call around each mutation. */
export type Auditor = Pick<MutationAuditor, 'ensureAvailable' | 'record'>;

/** Records nothing: only `npm run bench:audit`, to measure what auditing adds to a create. */
export const NO_AUDIT: Auditor = {
  ensureAvailable: () => Promise.resolve(),
  record: () => Promise.resolve(),
};

/**
 * The ordering rule of docs/audit.md ("Failure behaviour"): PostgreSQL must answer before a mutation starts,
 * and the mutation's record must be stored before its answer; either failing is a 503 naming postgres.
 */
export class MutationAuditor {
  private readonly unwritten: Counter<'action'>;

  constructor(
    private readonly store: AuditStore,
    private readonly logger: Logger,
    metricsRegistry: MetricsRegistry,
    /** Whether the schema has been migrated (until then nothing can be recorded). */
    private readonly schemaReady: () => boolean = () => true,
  ) {
    this.unwritten = counter(metricsRegistry, {
      name: 'audit_records_unwritten_total',
      help: 'Audit records that could not be stored after their action had been carried out (docs/audit.md, "Failure behaviour").',
      labelNames: ['action'],
    });
  }

  /** Before a mutation: a 503 naming postgres, and nothing changed, when PostgreSQL does not answer. */
  async ensureAvailable(): Promise<void> {
    try {
      if (!this.schemaReady()) throw new Error('the audit schema has not been migrated yet');
      await this.store.ping();
    } catch (error) {
      throw postgresUnavailable('nothing was changed', error);
    }
  }

  /** Stores the records of one request; a 503 naming postgres when they could not be stored. */
  async record(
    principal: Principal,
    requestId: string,
    outcome: Outcome,
    actions: readonly ActionDescription[],
    changed: boolean,
  ): Promise<void> {
    const entries = actions.map((action) => entryOf(principal, requestId, outcome, action));
    try {
      await this.store.append(entries);
    } catch (error) {
      if (!changed) throw postgresUnavailable('nothing was changed', error);
      for (const entry of entries) this.unwritten.inc({ action: entry.action });
      // The change was made but is unrecorded: the log keeps what the record would have said.
      this.logger.error({ err: error, unwrittenAuditRecords: entries }, 'audit records could not be stored');
      throw postgresUnavailable('the change was applied, but its audit record could not be stored', error);
    }
  }
}

function postgresUnavailable(consequence: string, cause: unknown): HttpError {
  return new HttpError('DependencyUnavailable', `${POSTGRES_DEPENDENCY} is unavailable: ${consequence}`, {
    cause,
  });
}

function entryOf(
  principal: Principal,
  requestId: string,
  outcome: Outcome,
  action: ActionDescription,
): AuditEntry {
  const detail = action.detail ?? outcome.detail;
  return {
    actor: actorOf(principal),
    action: action.action,
    target: action.target,
    outcome: { status: outcome.status, ...(detail === undefined ? {} : { detail }) },
    requestId,
  };
}

/** A user by their sub; an application by its client id (the user id its credential may name is not who acted). */
export function actorOf(principal: Principal): { type: ActorType; id: string } {
  if (principal.kind === 'application')
    return { type: 'application', id: principal.clientId ?? principal.id };
  return { type: 'user', id: principal.id };
}
