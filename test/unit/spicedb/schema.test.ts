import { describe, expect, it } from 'vitest';
import { parseSchemaShape, readSchemaText } from '../../../src/spicedb/schema.js';

describe('parseSchemaShape', () => {
  it("reads the project schema's definitions, relations and permissions", () => {
    const shape = parseSchemaShape(readSchemaText());
    expect([...shape.keys()].sort()).toEqual([
      'agent',
      'controller_lease',
      'controller_term',
      'group',
      'organization',
      'resource',
      'user',
    ]);
    const resource = shape.get('resource');
    expect([...(resource?.permissions ?? [])]).toEqual([
      'viewer',
      'delegated_viewer',
      'delegated_editor',
      'delegated_querier',
    ]);
    expect(resource?.relations.get('viewer_delegate')).toEqual(['agent with expiration']);
    expect(resource?.relations.get('editor')).toEqual(['user', 'group#member', 'organization#member']);
    expect(resource?.relations.has('viewer')).toBe(false);
  });

  it('ignores relations that are only mentioned in comments', () => {
    const shape = parseSchemaShape(`
      definition doc {
        // relation ghost: user
        /* permission phantom = ghost */
        relation real: user   with   expiration // trailing comment
      }`);
    expect(shape.get('doc')).toEqual({
      relations: new Map([['real', ['user with expiration']]]),
      permissions: new Set(),
    });
  });
});
