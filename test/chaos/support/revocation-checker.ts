import type { KubeConfig } from '@kubernetes/client-node';
import { EnforcedReason, type PolicyGrant } from '../../../src/api/v1alpha1/index.js';
import { sleep } from '../../../dev/wait/sleep.js';
import type { SpiceDBClient } from '../../../src/spicedb/client.js';
import { encodeObjectId } from '../../../src/spicedb/object-id.js';
import type { Registry } from '../../../src/spicedb/registry.js';
import { enforcedCondition } from '../../integration/controller/support/harness.js';
import { listGrants } from './cluster-objects.js';
import type { GrantedAccess, WithdrawnGrant } from './grant-churn.js';

/** A withdrawn grant that SpiceDB still allowed after the controller had acknowledged the withdrawal. */
export interface Violation {
  grant: string;
  how: WithdrawnGrant['how'];
  access: string;
  acknowledgedAt: string;
  /** The first and the last check that answered true (one entry per grant and access). */
  firstCheckedTrueAt: string;
  lastCheckedTrueAt: string;
}

const CHECKS_IN_FLIGHT = 8;

/**
 * Acknowledged: a revoked grant's status says Enforced=False (Revoked) for the generation that set revokedAt,
 * or the CR is gone (its finalizer removed after the tuples were deleted); a deleted grant's CR is gone.
 */
function isAcknowledged(withdrawn: WithdrawnGrant, grant: PolicyGrant | undefined): boolean {
  if (grant === undefined) return true;
  if (withdrawn.how === 'deleted') return false;
  const condition = enforcedCondition(grant);
  return (
    condition?.status === 'False' &&
    condition.reason === EnforcedReason.Revoked &&
    (condition.observedGeneration ?? 0) >= (withdrawn.generation ?? Infinity)
  );
}

/**
 * Asks SpiceDB directly, fully consistent, whether any access that an acknowledged withdrawn grant gave at any
 * of its generations remains. Users are never shared between grants, so any `true` is a violation.
 */
export class RevocationChecker {
  checks = 0;
  readonly violations: Violation[] = [];
  private readonly acknowledgedAt = new Map<string, Date>();

  constructor(
    private readonly kubeConfig: KubeConfig,
    private readonly namespace: string,
    private readonly withdrawn: ReadonlyMap<string, WithdrawnGrant>,
    private readonly client: SpiceDBClient,
    private readonly registry: Registry,
  ) {}

  get acknowledged(): number {
    return this.acknowledgedAt.size;
  }

  async run(shouldContinue: () => boolean, intervalMs: number): Promise<void> {
    while (shouldContinue()) {
      await this.pass();
      await sleep(intervalMs);
    }
  }

  /** Notes new acknowledgements, then checks every acknowledged grant once. */
  async pass(): Promise<void> {
    const pending = [...this.withdrawn.values()].filter(({ name }) => !this.acknowledgedAt.has(name));
    if (pending.length > 0) {
      const grants = new Map(
        (await listGrants(this.kubeConfig, this.namespace)).map((grant) => [grant.metadata.name, grant]),
      );
      const listedAt = new Date();
      for (const withdrawn of pending) {
        if (isAcknowledged(withdrawn, grants.get(withdrawn.name)))
          this.acknowledgedAt.set(withdrawn.name, listedAt);
      }
    }
    const checks = [...this.acknowledgedAt.keys()].flatMap((name) => {
      const withdrawn = this.withdrawn.get(name) as WithdrawnGrant;
      return withdrawn.accesses.map((access) => () => this.check(withdrawn, access));
    });
    for (let start = 0; start < checks.length; start += CHECKS_IN_FLIGHT) {
      await Promise.all(checks.slice(start, start + CHECKS_IN_FLIGHT).map((check) => check()));
    }
  }

  private async check(withdrawn: WithdrawnGrant, access: GrantedAccess): Promise<void> {
    const { allowed } = await this.client.checkPermission({
      resource: {
        type: this.registry.objectTypeOfItemType(access.itemType) as string,
        id: encodeObjectId(access.itemId),
      },
      permission: this.registry.relationOfAccessType(access.accessType) as string,
      subject: { type: 'user', id: encodeObjectId(access.userId) },
      consistency: { fullyConsistent: true },
    });
    this.checks += 1;
    if (!allowed) return;
    const described = `${access.accessType} on ${access.itemId} for user ${access.userId}`;
    const known = this.violations.find(
      (violation) => violation.grant === withdrawn.name && violation.access === described,
    );
    if (known) {
      known.lastCheckedTrueAt = new Date().toISOString();
      return;
    }
    this.violations.push({
      grant: withdrawn.name,
      how: withdrawn.how,
      access: described,
      acknowledgedAt: (this.acknowledgedAt.get(withdrawn.name) as Date).toISOString(),
      firstCheckedTrueAt: new Date().toISOString(),
      lastCheckedTrueAt: new Date().toISOString(),
    });
  }
}
