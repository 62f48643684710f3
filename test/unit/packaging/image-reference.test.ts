import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../../hack/sync-packaging.js';

// hack/kind-e2e.sh hands the chart an image reference as repository and tag (hack/image-reference.sh): a
// registry's port is not a tag.

function split(reference: string): [string, string] {
  const script = `source "${join(REPO_ROOT, 'hack/image-reference.sh')}"; image_repository "$1"; image_tag "$1"`;
  const output = execFileSync('bash', ['-c', script, 'split', reference], { encoding: 'utf8' });
  const [repository = '', tag = ''] = output.trimEnd().split('\n');
  return [repository, tag];
}

describe('hack/image-reference.sh', () => {
  it.each([
    ['policy-grant-operator:e2e', 'policy-grant-operator', 'e2e'],
    ['localhost:5001/policy-grant-operator:dev', 'localhost:5001/policy-grant-operator', 'dev'],
    ['localhost:5001/policy-grant-operator', 'localhost:5001/policy-grant-operator', 'latest'],
    [
      'registry.example.com/team/policy-grant-operator:0.1.0',
      'registry.example.com/team/policy-grant-operator',
      '0.1.0',
    ],
    ['policy-grant-operator', 'policy-grant-operator', 'latest'],
  ])('%s is repository %s, tag %s', (reference, repository, tag) => {
    expect(split(reference)).toEqual([repository, tag]);
  });

  it("the install suite (hack/chart-e2e.sh, kind's and the one-node cluster's) passes the image through it, not through a split at the first or any colon", () => {
    const script = readFileSync(join(REPO_ROOT, 'hack/chart-e2e.sh'), 'utf8');
    expect(script).toContain('source "$repo/hack/image-reference.sh"');
    expect(script).toContain('--set image.repository="$(image_repository "$image")"');
    expect(script).toContain('--set image.tag="$(image_tag "$image")"');
  });
});
