import { describe, expect, it } from 'vitest';
import { decisionUnderTest } from './support/decision-app.js';

async function passed(url: string, query: string) {
  const response = await fetch(`${url}/watch/passed?${query}`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('GET /watch/passed', () => {
  it('tells whether the replica passed a ZedToken, without credentials', async () => {
    const service = await decisionUnderTest();
    service.barrier.delivered.add('GhUKEzE3NjQ=');
    expect(await passed(service.url, 'zed_token=GhUKEzE3NjQ%3D&wait_ms=10')).toEqual({
      status: 200,
      body: expect.objectContaining({ title: 'Passed', passed: true, watchCurrent: true }),
    });
    expect((await passed(service.url, 'zed_token=GhUKEzE3NjU%3D')).body).toMatchObject({
      title: 'Not passed',
      passed: false,
    });
  });

  it('answers 400 naming the parameter for what cannot be a ZedToken or a wait beyond a second', async () => {
    const service = await decisionUnderTest();
    for (const [query, field] of [
      ['zed_token=not%20a%20token', 'zed_token'],
      ['', 'zed_token'],
      ['zed_token=abc&wait_ms=1001', 'wait_ms'],
      ['zed_token=abc&wait_ms=-1', 'wait_ms'],
    ] as const) {
      const { status, body } = await passed(service.url, query);
      expect(status, query).toBe(400);
      expect(body.detail, query).toContain(field);
    }
  });
});
