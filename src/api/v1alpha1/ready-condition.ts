import { setStatusCondition, type Condition, type ConditionUpdate } from './conditions.js';
import { ENFORCED_CONDITION } from './enforced-condition.js';

/**
 * The condition type that GitOps tools read (kstatus, `flux ... --wait`, Argo CD health, `kubectl wait`):
 * True when the object is as its spec asks, False while it is not.
 */
export const READY_CONDITION = 'Ready';

/**
 * Enforced reasons that are the state the spec asks for, though nothing is enforced: a revoked or expired grant or
 * delegation, a removed membership. Every other False reason (refused by the verdict, a conflict, a failed write)
 * is something to fix or wait for, so the object is not Ready.
 */
const SETTLED_REASONS: ReadonlySet<string> = new Set(['Revoked', 'Expired', 'Removed']);

/** Ready, summarising Enforced: the same reason and message, and the same observedGeneration. */
export function readyFromEnforced(enforced: ConditionUpdate): ConditionUpdate {
  const ready = enforced.status === 'True' || SETTLED_REASONS.has(enforced.reason);
  return { ...enforced, type: READY_CONDITION, status: ready ? 'True' : 'False' };
}

/** Sets Enforced and the Ready that summarises it; `changed` is true when either changed. */
export function setEnforcedAndReady(
  conditions: readonly Condition[],
  enforced: Omit<ConditionUpdate, 'type'>,
  now: Date,
): { conditions: Condition[]; changed: boolean } {
  const update = { ...enforced, type: ENFORCED_CONDITION };
  const first = setStatusCondition(conditions, update, now);
  const second = setStatusCondition(first.conditions, readyFromEnforced(update), now);
  return { conditions: second.conditions, changed: first.changed || second.changed };
}
