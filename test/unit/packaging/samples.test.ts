import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { CONFIG_DIR } from '../../../hack/sync-packaging.js';
import { CatalogItemSpecSchema, PolicyGrantSpecSchema } from '../../../src/api/v1alpha1/index.js';
import { ORGANISATION_LABEL } from '../../../src/verdict/namespace-authorisation.js';

// config/samples: what the docs point GitOps teams at, and what the development stack creates its CatalogItems
// from. The kube-apiserver accepts them too (test/integration/packaging/kustomize-config.test.ts).

interface Sample {
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: unknown;
}

const dir = join(CONFIG_DIR, 'samples');
const samples = readdirSync(dir)
  .filter((file) => file.endsWith('.yaml') && file !== 'kustomization.yaml')
  .flatMap((file) => yaml.loadAll(readFileSync(join(dir, file), 'utf8')) as Sample[]);
const ofKind = (kind: string) => samples.filter((sample) => sample.kind === kind);

describe('config/samples', () => {
  it('the kustomization lists every sample file', () => {
    const kustomization = yaml.load(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as {
      resources: string[];
    };
    const files = readdirSync(dir).filter((file) => file.endsWith('.yaml') && file !== 'kustomization.yaml');
    expect(kustomization.resources.sort()).toEqual(files.sort());
  });

  it('holds a CatalogItem, an INDIVIDUAL and a GROUP grant that the API validators accept', () => {
    const [item] = ofKind('CatalogItem');
    expect(CatalogItemSpecSchema.safeParse(item?.spec).error).toBeUndefined();
    const grants = ofKind('PolicyGrant');
    for (const grant of grants) expect(PolicyGrantSpecSchema.safeParse(grant.spec).error).toBeUndefined();
    expect(grants.map((grant) => (grant.spec as { policyType: string }).policyType).sort()).toEqual([
      'GROUP',
      'INDIVIDUAL',
    ]);
  });

  it("the grants live in a namespace bound to their item's organisation, so the controller enforces them", () => {
    const [item] = ofKind('CatalogItem') as { spec: { itemId: string; organisationId: string } }[];
    const [namespace] = ofKind('Namespace');
    expect(namespace?.metadata.labels?.[ORGANISATION_LABEL]).toBe(item?.spec.organisationId);
    for (const grant of ofKind('PolicyGrant')) {
      expect(grant.metadata.namespace).toBe(namespace?.metadata.name);
      expect((grant.spec as { itemId: string }).itemId).toBe(item?.spec.itemId);
    }
  });
});
