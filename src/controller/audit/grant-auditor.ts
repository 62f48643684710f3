import type { PolicyGrant } from '../../api/v1alpha1/index.js';
import type { AuditTarget } from '../../audit/audit-record.js';
import type { AuditStore } from '../../audit/audit-store.js';
import type { Logger } from '../../observability/logger.js';
import type { ClusterView } from '../cluster-view.js';
import { grantChange } from './grant-change.js';
import type { ActorSource } from './kubernetes-actor.js';

export interface GrantAuditorOptions {
  store: Pick<AuditStore, 'appendOnce'>;
  cluster: Pick<ClusterView, 'grant' | 'itemsWithId'>;
  /** Where a change's actor comes from: the admission policy's stamp, or the field manager (unverified). */
  actors: ActorSource;
  isLeader(): boolean;
  logger: Logger;
}

/**
 * Records each grant change made outside the ACL API (kubectl, GitOps) once: the reconciler of its own
 * controller (leader only) for creates and spec changes, and the grant reconciler before it releases a
 * deleted grant's finalizer. A failure throws, so the change is retried rather than lost.
 */
export class GrantAuditor {
  constructor(private readonly options: GrantAuditorOptions) {}

  readonly reconcile = async (key: string): Promise<undefined> => {
    const grant = this.options.cluster.grant(key);
    if (grant) await this.record(grant);
    return undefined;
  };

  async record(grant: PolicyGrant): Promise<void> {
    const change = grantChange(grant, this.target(grant), this.options.actors);
    if (!change) return;
    if (!this.options.isLeader()) throw new Error('not leading: the leader records grant changes');
    const written = await this.options.store.appendOnce([change]);
    for (const record of written) {
      this.options.logger.info(
        { auditRecord: record.id, action: record.action, actor: record.actor.id, changeKey: change.key },
        'grant change audited',
      );
    }
  }

  private target(grant: PolicyGrant): AuditTarget {
    const { itemId } = grant.spec;
    const organisationId = this.options.cluster.itemsWithId(itemId)[0]?.spec.organisationId;
    return {
      kind: 'policy',
      id: grant.metadata.uid ?? '',
      itemId,
      ...(organisationId === undefined ? {} : { organisationId }),
    };
  }
}
