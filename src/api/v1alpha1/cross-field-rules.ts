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

/**
 * A rule on a change (CEL `oldSelf`): the kube-apiserver checks it on updates only, so it has no zod counterpart
 * (zod sees one object, never its previous version).
 */
export interface TransitionRule {
  readonly field: string;
  readonly message: string;
  readonly cel: string;
}

/** A field that keeps the value it was created with, present or absent. */
export function immutableField(field: string, why: string): TransitionRule {
  return {
    field,
    message: `${field} is immutable: ${why}`,
    cel: `has(self.${field}) == has(oldSelf.${field}) && (!has(self.${field}) || self.${field} == oldSelf.${field})`,
  };
}

/** A field that may be set once, later than creation, and then keeps its value. */
export function finalOnceSet(field: string, why: string): TransitionRule {
  return {
    field,
    message: `${field} is final once set: ${why}`,
    cel: `!has(oldSelf.${field}) || (has(self.${field}) && self.${field} == oldSelf.${field})`,
  };
}

export function transitionValidation(rule: TransitionRule): CelValidation {
  return {
    rule: rule.cel,
    message: rule.message,
    fieldPath: `.${rule.field}`,
    reason: 'FieldValueForbidden',
  };
}

/** The schema with `rules` added to its `x-kubernetes-validations` (after the cross-field rules it may carry). */
export function withTransitionRules<S extends z.ZodType>(schema: S, rules: readonly TransitionRule[]): S {
  const meta = schema.meta() ?? {};
  const existing = (meta['x-kubernetes-validations'] ?? []) as readonly CelValidation[];
  return schema.meta({
    ...meta,
    'x-kubernetes-validations': [...existing, ...rules.map(transitionValidation)],
  });
}
