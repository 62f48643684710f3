import { describe, expect, it } from 'vitest';
import {
  catalogItemCrd,
  catalogItemSpecRules,
  policyGrantCrd,
  policyGrantSpecRules,
  policyGrantTransitionRules,
  toCelValidation,
  transitionValidation,
  type CrossFieldRule,
  type TransitionRule,
  type CustomResourceDefinition,
} from '../../../src/api/v1alpha1/index.js';
import {
  catalogItemSpec,
  individualSpec,
  invalidCatalogItemSpecs,
  invalidPolicyGrantSpecs,
  validPolicyGrantSpecs,
  type SpecExample,
  type InvalidSpecExample,
} from './spec-examples.js';

// The CEL text itself is proven against a real kube-apiserver, with these same examples, by
// test/integration/api/crd-validation.test.ts. Here: the TypeScript twin of each rule says the same.

function specValidations(crd: CustomResourceDefinition) {
  return crd.spec.versions[0]?.schema.openAPIV3Schema.properties?.spec?.['x-kubernetes-validations'];
}

/** Every example, with whether `rule` must hold for it: only the example written to break it may not. */
function expectations(rule: CrossFieldRule<never>, examples: (SpecExample | InvalidSpecExample)[]) {
  return examples.map((example) => ({
    name: example.name,
    spec: example.spec,
    holds: !('ruleMessage' in example && example.ruleMessage === rule.message),
  }));
}

interface RuleTable {
  kind: string;
  rules: readonly CrossFieldRule<never>[];
  /** Rules on changes (oldSelf), after the cross-field rules: proven on the kube-apiserver only. */
  transitions: readonly TransitionRule[];
  crd: CustomResourceDefinition;
  examples: (SpecExample | InvalidSpecExample)[];
}

const tables: RuleTable[] = [
  {
    kind: 'PolicyGrant',
    rules: policyGrantSpecRules,
    transitions: policyGrantTransitionRules,
    crd: policyGrantCrd(),
    examples: [...validPolicyGrantSpecs, ...invalidPolicyGrantSpecs],
  },
  {
    kind: 'CatalogItem',
    rules: catalogItemSpecRules,
    transitions: [],
    crd: catalogItemCrd(),
    examples: [{ name: 'catalog item', spec: catalogItemSpec }, ...invalidCatalogItemSpecs],
  },
];

describe.each(tables)('$kind cross-field rules', ({ rules, transitions, crd, examples }) => {
  it('are, with the transition rules, exactly the x-kubernetes-validations of the CRD spec', () => {
    expect(specValidations(crd)).toEqual([
      ...rules.map(toCelValidation),
      ...transitions.map(transitionValidation),
    ]);
  });

  it('each have an example that breaks them', () => {
    for (const rule of rules)
      expect(examples.some((e) => 'ruleMessage' in e && e.ruleMessage === rule.message)).toBe(true);
  });

  it.each([...rules])('$message: the TypeScript predicate agrees with the examples', (rule) => {
    const holds = rule.holds as (spec: unknown) => boolean;
    for (const example of expectations(rule, examples)) {
      expect({ example: example.name, holds: holds(example.spec) }).toEqual({
        example: example.name,
        holds: example.holds,
      });
    }
  });

  it.each([...rules])('$message: the field it names exists in the CRD schema', (rule) => {
    let node = crd.spec.versions[0]?.schema.openAPIV3Schema.properties?.spec;
    for (const segment of rule.field) node = node?.properties?.[segment];
    expect(node?.type).toBeDefined();
  });
});

describe('PolicyGrant rule predicates on edge cases', () => {
  const [individualNeedsUser, groupNeedsOrgs, uniqueAccess] = policyGrantSpecRules;

  it('a GROUP grant needs no userId, an INDIVIDUAL grant needs no organisations', () => {
    const { userId: _userId, ...withoutUser } = individualSpec;
    expect(individualNeedsUser?.holds({ ...withoutUser, policyType: 'GROUP' })).toBe(true);
    expect(groupNeedsOrgs?.holds(individualSpec)).toBe(true);
  });

  it('access types compare exactly: api and API are two types', () => {
    const access = [{ accessType: 'api' }, { accessType: 'API' }];
    expect(uniqueAccess?.holds({ ...individualSpec, constraints: { access } })).toBe(true);
  });
});
