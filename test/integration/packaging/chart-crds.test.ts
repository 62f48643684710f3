import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { crdFileNames, REPO_ROOT } from '../../../hack/sync-packaging.js';
import {
  CHART_DIR,
  EXTERNAL_SPICEDB_VALUES,
  isCrd,
  renderChart,
  type KubeObject,
} from './packaging-support.js';

// The CRDs are templates of the chart: `helm upgrade` upgrades them (Helm never touches a
// chart's crds/ folder after the first install), `helm uninstall` keeps them and so every grant, and each one
// carries the chart's labels with the version.

const NAMESPACE = 'policy-grant-system';

const appVersion = (yaml.load(readFileSync(join(CHART_DIR, 'Chart.yaml'), 'utf8')) as { appVersion: string })
  .appVersion;

const crdsOf = (objects: KubeObject[]) => objects.filter(isCrd);

function committedCrds(): KubeObject[] {
  return crdFileNames().map(
    (file) => yaml.load(readFileSync(join(REPO_ROOT, 'crds', file), 'utf8')) as KubeObject,
  );
}

describe('the CRDs as chart templates', () => {
  it('renders every CRD of crds/ unchanged, labelled with the version and kept on uninstall', async () => {
    const rendered = crdsOf(await renderChart(NAMESPACE, EXTERNAL_SPICEDB_VALUES));
    const committed = committedCrds();
    expect(rendered.map((crd) => crd.metadata.name).sort()).toEqual(
      committed.map((crd) => crd.metadata.name).sort(),
    );
    for (const crd of committed) {
      const copy = rendered.find((candidate) => candidate.metadata.name === crd.metadata.name);
      expect(copy?.spec, crd.metadata.name).toEqual(crd.spec);
      expect(copy?.metadata.labels).toMatchObject({
        'app.kubernetes.io/name': 'policy-grant-operator',
        'app.kubernetes.io/version': appVersion,
        'app.kubernetes.io/managed-by': 'Helm',
        'helm.sh/chart': `policy-grant-operator-${appVersion}`,
      });
      expect(copy?.metadata.annotations).toEqual({ 'helm.sh/resource-policy': 'keep' });
    }
  });

  it('crds.keep: false lets helm uninstall delete them; crds.enabled: false renders none', async () => {
    const unkept = crdsOf(
      await renderChart(NAMESPACE, { ...EXTERNAL_SPICEDB_VALUES, crds: { keep: false } }),
    );
    expect(unkept).toHaveLength(committedCrds().length);
    for (const crd of unkept) expect(crd.metadata.annotations).toBeUndefined();
    const off = await renderChart(NAMESPACE, { ...EXTERNAL_SPICEDB_VALUES, crds: { enabled: false } });
    expect(crdsOf(off)).toEqual([]);
    expect(off.some((object) => object.kind === 'Deployment')).toBe(true);
  });

  it('the chart has no crds/ folder, which Helm would install once and never upgrade', () => {
    expect(() => readFileSync(join(CHART_DIR, 'crds'))).toThrow(/ENOENT/);
  });
});
