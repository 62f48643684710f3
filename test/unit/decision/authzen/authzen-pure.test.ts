import { describe, expect, it } from 'vitest';
import { evaluationsRequestSchema } from '../../../../src/decision/authzen/authzen-request.js';
import { authzenMetadata, metadataPath } from '../../../../src/decision/authzen/authzen-metadata.js';
import { canonicalEvaluation } from '../../../../src/decision/authzen/authzen-vocabulary.js';
import { answeredDecisions } from '../../../../src/decision/authzen/evaluations-semantic.js';
import { loadRegistry } from '../../../../src/spicedb/registry.js';

describe('answeredDecisions', () => {
  const answers = (...decisions: boolean[]) => decisions.map((decision) => ({ decision }));
  const decisions = answers(true, false, true, false);
  it('answers every evaluation under execute_all', () => {
    expect(answeredDecisions(decisions, 'execute_all')).toEqual(decisions);
  });
  it('stops after the first deny or the first permit', () => {
    expect(answeredDecisions(decisions, 'deny_on_first_deny')).toEqual(answers(true, false));
    expect(answeredDecisions(decisions, 'permit_on_first_permit')).toEqual(answers(true));
    expect(answeredDecisions(answers(false, false), 'permit_on_first_permit')).toEqual(answers(false, false));
    expect(answeredDecisions(answers(true, true), 'deny_on_first_deny')).toEqual(answers(true, true));
  });
  it('counts an evaluation that could not be decided as a deny, keeping its error', () => {
    const undecided = { decision: false, context: { error: { status: 400, message: 'action.name: …' } } };
    expect(
      answeredDecisions([{ decision: true }, undecided, { decision: true }], 'deny_on_first_deny'),
    ).toEqual([{ decision: true }, undecided]);
  });
});

describe('the AuthZEN vocabulary', () => {
  const registry = loadRegistry();
  it('maps a triple onto the check, aliases resolved', () => {
    const check = canonicalEvaluation(registry, {
      subject: { type: 'group', id: 'g', properties: { organisation_id: 'o' } },
      resource: { type: 'DATABANK', id: 'urn:x' },
      action: { name: 'viewer' },
    });
    expect(check.object.type).toBe('resource');
    expect(check.spicedb.subjectRelation).toBe('member');
  });
  it('names the AuthZEN field of a request outside it', () => {
    const ask = (action: string, at?: string) => () =>
      canonicalEvaluation(
        registry,
        {
          subject: { type: 'user', id: 'u' },
          resource: { type: 'resource', id: 'i' },
          action: { name: action },
        },
        at,
      );
    expect(ask('fly')).toThrow(/^action\.name: relation "fly"/);
    expect(ask('fly', 'evaluations[2].')).toThrow(/^evaluations\[2\]\.action\.name/);
  });
  it('refuses a group without its organisation, naming subject.properties.organisation_id', () => {
    expect(() =>
      canonicalEvaluation(registry, {
        subject: { type: 'group', id: 'g' },
        resource: { type: 'resource', id: 'i' },
        action: { name: 'viewer' },
      }),
    ).toThrow(/subject\.properties\.organisation_id/);
  });
});

describe('request parsing and metadata', () => {
  it('defaults evaluations_semantic to execute_all and refuses unknown ones', () => {
    expect(evaluationsRequestSchema.parse({ options: {} }).options?.evaluations_semantic).toBe('execute_all');
    expect(evaluationsRequestSchema.safeParse({ options: { evaluations_semantic: 'any' } }).success).toBe(
      false,
    );
  });
  it('serves the metadata where AuthZEN inserts the well-known string: before the identifier path', () => {
    expect(metadataPath('https://gw.example')).toBe('/.well-known/authzen-configuration');
    expect(metadataPath('https://gw.example/')).toBe('/.well-known/authzen-configuration');
    expect(metadataPath('https://gw.example/decision/')).toBe('/.well-known/authzen-configuration/decision');
    expect(metadataPath('https://gw.example/a/b')).toBe('/.well-known/authzen-configuration/a/b');
  });
  it('names every endpoint under the base URL', () => {
    expect(authzenMetadata('https://gw.example/authz/')).toEqual({
      policy_decision_point: 'https://gw.example/authz',
      access_evaluation_endpoint: 'https://gw.example/authz/access/v1/evaluation',
      access_evaluations_endpoint: 'https://gw.example/authz/access/v1/evaluations',
      search_subject_endpoint: 'https://gw.example/authz/access/v1/search/subject',
      search_resource_endpoint: 'https://gw.example/authz/access/v1/search/resource',
      search_action_endpoint: 'https://gw.example/authz/access/v1/search/action',
    });
  });
});
