import { z } from 'zod';
import { dateTimeField } from './field-schemas.js';

// The standard Kubernetes condition (metav1.Condition), with its upstream validation, and the
// list operations of k8s.io/apimachinery/pkg/api/meta (SetStatusCondition, FindStatusCondition).

const CONDITION_TYPE =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/;
const CONDITION_REASON = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;

export const ConditionStatusSchema = z
  .enum(['True', 'False', 'Unknown'])
  .describe('Status of the condition: True, False or Unknown.');
export type ConditionStatus = z.infer<typeof ConditionStatusSchema>;

export const ConditionSchema = z
  .object({
    type: z
      .string()
      .max(316)
      .regex(CONDITION_TYPE)
      .describe('Type of the condition in CamelCase, for example Enforced.'),
    status: ConditionStatusSchema,
    observedGeneration: z
      .int()
      .min(0)
      .meta({ format: 'int64' })
      .optional()
      .describe('The metadata.generation that the condition was set from.'),
    lastTransitionTime: dateTimeField().describe(
      'When the condition last changed from one status to another.',
    ),
    reason: z
      .string()
      .min(1)
      .max(1024)
      .regex(CONDITION_REASON)
      .describe('Programmatic identifier in CamelCase for the reason of the last transition.'),
    message: z
      .string()
      .max(32768)
      .describe('Human-readable details about the last transition; may be empty.'),
  })
  .describe('A condition of the resource, in the standard Kubernetes shape (metav1.Condition).');
export type Condition = z.infer<typeof ConditionSchema>;

/** A condition to set: lastTransitionTime is filled in when the status changes. */
export type ConditionUpdate = Omit<Condition, 'lastTransitionTime'> & { lastTransitionTime?: string };

export function findStatusCondition(conditions: readonly Condition[], type: string): Condition | undefined {
  return conditions.find((condition) => condition.type === type);
}

/** A Kubernetes timestamp (metav1.Time): RFC 3339 in UTC, whole seconds. */
export function toKubernetesTime(date: Date): string {
  return date.toISOString().replace(/\.\d+Z$/, 'Z');
}

/**
 * Sets `update` in `conditions` as meta.SetStatusCondition does: a new type is appended; an existing
 * one takes the new status, reason, message and observedGeneration, and a new lastTransitionTime only
 * when its status changes. Returns a new list (the input is not modified) and whether anything changed.
 */
export function setStatusCondition(
  conditions: readonly Condition[],
  update: ConditionUpdate,
  now: Date,
): { conditions: Condition[]; changed: boolean } {
  const { lastTransitionTime = toKubernetesTime(now), ...fields } = update;
  const existing = findStatusCondition(conditions, fields.type);
  if (!existing) return { conditions: [...conditions, { ...fields, lastTransitionTime }], changed: true };
  const next: Condition = {
    ...fields,
    lastTransitionTime: existing.status === fields.status ? existing.lastTransitionTime : lastTransitionTime,
  };
  const changed = !sameCondition(existing, next);
  return {
    conditions: conditions.map((condition) => (condition === existing && changed ? next : condition)),
    changed,
  };
}

function sameCondition(a: Condition, b: Condition): boolean {
  return (
    a.status === b.status &&
    a.reason === b.reason &&
    a.message === b.message &&
    a.observedGeneration === b.observedGeneration &&
    a.lastTransitionTime === b.lastTransitionTime
  );
}
