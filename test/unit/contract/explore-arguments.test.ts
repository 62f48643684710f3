import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exploration } from '../../contract/explore.js';

describe('npm run contract:explore arguments', () => {
  it('explores every document with the CI seed and 100 examples per operation by default', () => {
    expect(exploration({ dir: '.dev-x' })).toEqual({
      seeds: ['20261127'],
      examplesPerOperation: 100,
      documents: ['acl', 'decision', 'controller'],
      stateDir: resolve('.dev-x'),
    });
  });

  it('takes several seeds and documents', () => {
    const plan = exploration({ seed: ['1', '2'], document: ['acl'], 'max-examples': '7', dir: '/s' });
    expect(plan).toMatchObject({ seeds: ['1', '2'], documents: ['acl'], examplesPerOperation: 7 });
  });

  it.each([
    [{ seed: ['x'] }, '--seed'],
    [{ 'max-examples': '0' }, '--max-examples'],
    [{ 'max-examples': '1.5' }, '--max-examples'],
    [{ document: ['gateway'] }, '--document gateway'],
  ])('refuses %j, naming the option', (values, option) => {
    expect(exploration(values)).toContain(option);
  });
});
