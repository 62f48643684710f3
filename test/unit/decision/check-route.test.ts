import { describe, expect, it } from 'vitest';
import { checkResponseSchema, deniedProblemSchema } from '../../../src/decision/check-request.js';
import { SpiceDBError, SpiceDBUnavailableError } from '../../../src/spicedb/errors.js';
import { signToken } from '../auth/support/tokens.js';
import { aliceChecksApi, decisionUnderTest, urn } from './support/decision-app.js';

describe('POST /v1/check canonicalises and asks SpiceDB', () => {
  it('maps a user check onto the SpiceDB relation, with encoded ids, at minimize_latency', async () => {
    const decision = await decisionUnderTest();
    decision.spicedb.answer = async () => ({ allowed: true, checkedAt: 'snapshot' });

    const { status, body } = await decision.post(aliceChecksApi());

    expect(decision.spicedb.queries).toEqual([
      {
        resource: { type: 'resource', id: 'urn=3Adx=3Aitem=3A1' },
        permission: 'api_consumer',
        subject: { type: 'user', id: 'alice' },
        consistency: { minimizeLatency: true },
      },
    ]);
    expect(status).toBe(200);
    expect(body).toEqual({
      type: 'urn:dx:authz:Success',
      title: 'Allowed',
      result: {
        allowed: true,
        subject: { type: 'user', id: 'alice' },
        object: { type: 'resource', id: 'urn:dx:item:1' },
        relation: 'api',
        checked_at: 'snapshot',
      },
    });
    expect(checkResponseSchema(urn).safeParse(body).success).toBe(true);
  });

  it('answers a deny as 200 with allowed false', async () => {
    const decision = await decisionUnderTest();
    const { status, body } = await decision.post(aliceChecksApi({ organisation_id: undefined }));
    expect(status).toBe(200);
    expect(body.title).toBe('Denied');
    expect(body.result.allowed).toBe(false);
  });

  it('resolves the alias DATABANK to the canonical resource type', async () => {
    const decision = await decisionUnderTest();
    const { body } = await decision.post(aliceChecksApi({ resource_type: 'DATABANK' }));
    expect(body.result.object).toEqual({ type: 'resource', id: 'urn:dx:item:1' });
    expect(decision.spicedb.queries[0]?.resource.type).toBe('resource');
  });

  it('checks a group as its members, scoped by organisation', async () => {
    const decision = await decisionUnderTest();
    const { body } = await decision.post(
      aliceChecksApi({
        subject_type: 'group',
        subject_id: 'g:1',
        organisation_id: 'org-1',
        relation: 'viewer',
      }),
    );
    expect(decision.spicedb.queries[0]).toMatchObject({
      permission: 'viewer',
      subject: { type: 'group', id: 'org-1|g=3A1', relation: 'member' },
    });
    expect(body.result.subject).toEqual({ type: 'group', id: 'g:1', organisation_id: 'org-1' });
  });

  it('evaluates at least as fresh as a consistency token', async () => {
    const decision = await decisionUnderTest();
    await decision.post(aliceChecksApi({ consistency_token: 'GhUKEzE3NjM4MjQ1NjE=' }));
    expect(decision.spicedb.queries[0]?.consistency).toEqual({ atLeastAsFresh: 'GhUKEzE3NjM4MjQ1NjE=' });
  });
});

describe('POST /v1/check answers enforcement points only', () => {
  it('answers 403 that denies to an end user without the role, before reading the body or asking SpiceDB', async () => {
    const decision = await decisionUnderTest();
    const endUser = { authorization: `Bearer ${await signToken(decision.key, { roles: ['org_admin'] })}` };
    for (const body of [
      aliceChecksApi(),
      aliceChecksApi({ relation: 'api_consumer' }),
      '{"subject_type": ',
    ]) {
      const answer = await decision.post(body, endUser);
      expect(answer.status).toBe(403);
      expect(answer.body).toEqual({
        type: 'urn:dx:authz:Forbidden',
        title: 'Forbidden',
        detail: 'only enforcement points may call the check: callers with the role decision_client',
        result: { allowed: false },
      });
    }
    expect(decision.spicedb.queries).toEqual([]);
  });
});

describe('POST /v1/check rejects what the spec does not allow, naming the field', () => {
  const cases: Array<[string, Record<string, unknown> | unknown, string]> = [
    ['subject_type not user, agent or group', aliceChecksApi({ subject_type: 'robot' }), 'subject_type'],
    ['subject_type missing', aliceChecksApi({ subject_type: undefined }), 'subject_type'],
    ['subject_id empty', aliceChecksApi({ subject_id: '' }), 'subject_id'],
    ['subject_id too long', aliceChecksApi({ subject_id: 'x'.repeat(1025) }), 'subject_id'],
    ['subject_id too long once encoded', aliceChecksApi({ subject_id: ':'.repeat(400) }), 'subject_id'],
    ['subject_id not well-formed Unicode', aliceChecksApi({ subject_id: '\ud800' }), 'subject_id'],
    ['subject_id a number', aliceChecksApi({ subject_id: 7 }), 'subject_id'],
    ['organisation_id missing for a group', aliceChecksApi({ subject_type: 'group' }), 'organisation_id'],
    ['organisation_id set for a user', aliceChecksApi({ organisation_id: 'org-1' }), 'organisation_id'],
    ['organisation_id null', aliceChecksApi({ organisation_id: null }), 'organisation_id'],
    ['resource_type unknown', aliceChecksApi({ resource_type: 'ITEM' }), 'resource_type'],
    ['resource_type of another case', aliceChecksApi({ resource_type: 'Resource' }), 'resource_type'],
    ['resource_id empty', aliceChecksApi({ resource_id: '' }), 'resource_id'],
    ['relation not defined on the type', aliceChecksApi({ relation: 'api_consumer' }), 'relation'],
    ['relation from the prototype', aliceChecksApi({ relation: 'constructor' }), 'relation'],
    ['relation missing', aliceChecksApi({ relation: undefined }), 'relation'],
    [
      'consistency_token not base64',
      aliceChecksApi({ consistency_token: 'not a token' }),
      'consistency_token',
    ],
    ['an unknown field', aliceChecksApi({ organization_id: '' }), 'organization_id'],
    ['a body that is an array', [aliceChecksApi()], 'body'],
  ];

  it.each(cases)('%s', async (_case, body, field) => {
    const decision = await decisionUnderTest();
    const answer = await decision.post(body);
    expect(answer.status).toBe(400);
    expect(answer.body.type).toBe('urn:dx:authz:BadRequest');
    expect(answer.body.detail).toContain(field);
    expect(answer.body.result).toEqual({ allowed: false });
    expect(deniedProblemSchema.safeParse(answer.body).success).toBe(true);
    expect(decision.spicedb.queries).toEqual([]);
  });

  it('answers malformed JSON, other media types and oversized bodies with a deny', async () => {
    const decision = await decisionUnderTest();
    const malformed = await decision.post('{"subject_type": ');
    const text = await decision.post('subject_type=user', { 'content-type': 'text/plain' });
    const huge = await decision.post(aliceChecksApi({ subject_id: 'x'.repeat(40_000) }));
    expect([malformed.status, text.status, huge.status]).toEqual([400, 415, 413]);
    for (const { body } of [malformed, text, huge]) expect(body.result).toEqual({ allowed: false });
  });

  it('answers another method with a 405 that denies', async () => {
    const decision = await decisionUnderTest();
    const response = await fetch(`${decision.url}/v1/check`, {
      headers: { authorization: decision.authorization },
    });
    expect(response.status).toBe(405);
    expect(await response.json()).toMatchObject({ result: { allowed: false } });
  });
});

describe('POST /v1/check fails closed', () => {
  it('answers 503 naming spicedb with allowed false when SpiceDB is unavailable', async () => {
    const decision = await decisionUnderTest();
    decision.spicedb.answer = async () => {
      throw new SpiceDBUnavailableError('CheckPermission', 14, 'connection refused');
    };
    const { status, body } = await decision.post(aliceChecksApi());
    expect(status).toBe(503);
    expect(body).toEqual({
      type: 'urn:dx:authz:DependencyUnavailable',
      title: 'Dependency unavailable',
      detail: expect.stringContaining('spicedb'),
      result: { allowed: false },
    });
  });

  it('answers 503 for any other SpiceDB error', async () => {
    const decision = await decisionUnderTest();
    decision.spicedb.answer = async () => {
      throw new SpiceDBError('CheckPermission', 9, 'object definition not found');
    };
    const { status, body } = await decision.post(aliceChecksApi());
    expect(status).toBe(503);
    expect(body.result).toEqual({ allowed: false });
  });

  it('never allows on an unexpected exception', async () => {
    const decision = await decisionUnderTest();
    decision.spicedb.answer = async () => {
      throw new TypeError('a bug');
    };
    const { status, body } = await decision.post(aliceChecksApi());
    expect(status).toBe(500);
    expect(body.result).toEqual({ allowed: false });
    expect(body.detail).not.toContain('a bug');
  });

  it('treats only a strict true from SpiceDB as an allow', async () => {
    const decision = await decisionUnderTest();
    decision.spicedb.answer = async () => ({ allowed: 'yes' as unknown as boolean, checkedAt: undefined });
    const { body } = await decision.post(aliceChecksApi());
    expect(body.result.allowed).toBe(false);
    expect(body.result).not.toHaveProperty('checked_at');
  });

  it('answers a token SpiceDB does not know with a 400 naming consistency_token', async () => {
    const decision = await decisionUnderTest();
    decision.spicedb.answer = async () => {
      throw new SpiceDBError('CheckPermission', 3, 'gRPC code 3: invalid revision requested');
    };
    const withToken = await decision.post(aliceChecksApi({ consistency_token: 'Z2FyYmFnZQ==' }));
    expect(withToken.status).toBe(400);
    expect(withToken.body.detail).toMatch(/^consistency_token: /);
    expect(withToken.body.result).toEqual({ allowed: false });
    // Without a token, the same error can only be ours: SpiceDB's failure, not the caller's input.
    expect((await decision.post(aliceChecksApi())).status).toBe(503);
  });

  it('evaluates at the consistency the barrier picks, and a revision of the barrier’s SpiceDB rejects is a 503', async () => {
    const decision = await decisionUnderTest();
    decision.barrier.choose = async () => ({ consistency: { atLeastAsFresh: 'recent' }, source: 'touched' });
    decision.spicedb.answer = async () => {
      throw new SpiceDBError('CheckPermission', 3, 'gRPC code 3: invalid revision requested');
    };
    const answer = await decision.post(aliceChecksApi({ consistency_token: 'Z2FyYmFnZQ==' }));
    expect(decision.spicedb.queries[0]?.consistency).toEqual({ atLeastAsFresh: 'recent' });
    expect(answer.status).toBe(503);
    expect(answer.body.detail).toContain('spicedb');
  });

  it('denies with 503 naming spicedb when the barrier cannot read the head revision', async () => {
    const decision = await decisionUnderTest();
    decision.barrier.choose = async () => {
      throw new SpiceDBUnavailableError('CheckPermission', 14, 'connection refused');
    };
    const answer = await decision.post(aliceChecksApi());
    expect(answer.status).toBe(503);
    expect(answer.body).toMatchObject({
      detail: expect.stringContaining('spicedb'),
      result: { allowed: false },
    });
    expect(decision.spicedb.queries).toEqual([]);
  });
});

describe('authentication and operational endpoints', () => {
  it('answers 401 with allowed false without credentials or with a forged token', async () => {
    const decision = await decisionUnderTest();
    const forged =
      decision.authorization.slice(0, -4) + (decision.authorization.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    for (const headers of [
      { authorization: '' },
      { authorization: forged },
      { authorization: 'Basic Zm9vOmJhcg==' },
    ]) {
      const { status, body } = await decision.post(aliceChecksApi(), headers);
      expect(status).toBe(401);
      expect(body).toMatchObject({ type: 'urn:dx:authz:Unauthorized', result: { allowed: false } });
    }
    expect(decision.spicedb.queries).toEqual([]);
  });

  it('is ready only when SpiceDB has a schema and evaluates checks, and names spicedb when not', async () => {
    const decision = await decisionUnderTest();
    const ready = async () => {
      const response = await fetch(`${decision.url}/healthz/ready`);
      return { status: response.status, detail: ((await response.json()) as { detail?: string }).detail };
    };
    expect(await ready()).toEqual({ status: 200, detail: undefined });
    expect(decision.spicedb.queries.at(-1)?.consistency).toEqual({ minimizeLatency: true });

    decision.spicedb.schemaWritten = false;
    expect(await ready()).toEqual({ status: 503, detail: expect.stringContaining('spicedb') });

    decision.spicedb.schemaWritten = true;
    decision.spicedb.answer = async () => {
      throw new SpiceDBError('CheckPermission', 9, 'object definition `resource` not found');
    };
    expect(await ready()).toEqual({ status: 503, detail: expect.stringContaining('spicedb') });
  });

  it('counts decisions by result, backend errors by gRPC code, and check latency', async () => {
    const decision = await decisionUnderTest();
    const answers = [true, false, false];
    decision.spicedb.answer = async () => {
      const allowed = answers.shift();
      if (allowed === undefined) throw new SpiceDBUnavailableError('CheckPermission', 4, 'deadline exceeded');
      return { allowed, checkedAt: undefined };
    };
    for (let i = 0; i < 4; i++) await decision.post(aliceChecksApi());
    await decision.post(aliceChecksApi({ relation: 'nope' }));
    const metrics = await decision.metrics.metrics();
    expect(metrics).toContain('policygrant_decisions_total{result="allowed"} 1');
    expect(metrics).toContain('policygrant_decisions_total{result="denied"} 2');
    expect(metrics).toContain('policygrant_decisions_total{result="error"} 1');
    expect(metrics).toContain('policygrant_decision_spicedb_errors_total{grpc_code="DEADLINE_EXCEEDED"} 1');
    expect(metrics).toContain('policygrant_decision_check_duration_seconds_count{result="denied"} 2');
    expect(metrics).toContain(
      'policygrant_http_requests_total{method="POST",route="/v1/check",code="400"} 1',
    );
  });

  it('never logs the token or the ids of a check', async () => {
    const decision = await decisionUnderTest();
    await decision.post(aliceChecksApi({ subject_id: 'secret-subject-7' }));
    decision.spicedb.answer = async () => {
      throw new SpiceDBUnavailableError('CheckPermission', 14, 'down');
    };
    await decision.post(aliceChecksApi({ subject_id: 'secret-subject-7' }));
    const logged = decision.logs.text();
    expect(logged).toContain('dependency unavailable');
    expect(logged).not.toContain('secret-subject-7');
    expect(logged).not.toContain(decision.authorization.slice(7));
  });
});
