import type { z } from 'zod';

/**
 * How the kube-apiserver classifies a failed rule in its field error (apiextensions `reason`).
 * FieldValueDuplicate is left out on purpose: the apiserver then drops the rule's message.
 */
export type CelReason = 'FieldValueInvalid' | 'FieldValueRequired' | 'FieldValueForbidden';

/**
 * A rule that the schema alone cannot say, written twice side by side so that the two cannot drift:
 * as CEL for the kube-apiserver (`x-kubernetes-validations`) and as a TypeScript predicate for zod.
 * Both sit on the same object (`self`) and report the same message on the same field.
 */
export interface CrossFieldRule<T> {
  /** Path from `self` to the field the rule is about: zod's issue path and the apiserver's fieldPath. */
  readonly field: readonly string[];
  readonly message: string;
  readonly reason: CelReason;
  readonly cel: string;
  /** The CEL rule in TypeScript: true when `self` satisfies it. */
  readonly holds: (self: T) => boolean;
}

/** One entry of `x-kubernetes-validations`. */
export interface CelValidation {
  readonly rule: string;
  readonly message: string;
  readonly fieldPath: string;
  readonly reason: CelReason;
}

export function toCelValidation(rule: CrossFieldRule<never>): CelValidation {
  return {
    rule: rule.cel,
    message: rule.message,
    fieldPath: `.${rule.field.join('.')}`,
    reason: rule.reason,
  };
}

/**
 * The object schema with the rules attached twice: as zod refinements (checked by `parse`) and as
 * `x-kubernetes-validations` metadata (emitted by `z.toJSONSchema`, so the CRD generator carries it).
 * Zod runs refinements only once every field has the right type, so predicates may trust the shape.
 */
export function withCrossFieldRules<S extends z.ZodObject>(
  schema: S,
  rules: readonly CrossFieldRule<z.output<S>>[],
): S {
  return schema
    .superRefine((self, ctx) => {
      for (const rule of rules) {
        if (!rule.holds(self)) ctx.addIssue({ code: 'custom', message: rule.message, path: [...rule.field] });
      }
    })
    .meta({ 'x-kubernetes-validations': rules.map(toCelValidation) });
}
