import { describe, expect, it } from 'vitest';
import { REDACTED } from '../../../src/observability/logger.js';
import { capturedLogger } from '../http/support/serve.js';

describe('createLogger', () => {
  it('writes JSON lines with a level name and an ISO timestamp', () => {
    const logs = capturedLogger();
    logs.logger.info({ answer: 42 }, 'hello');
    const [line] = logs.lines();
    expect(line).toMatchObject({ level: 'info', msg: 'hello', answer: 42 });
    expect(new Date(line?.time as string).toISOString()).toBe(line?.time);
  });

  it('never writes authorization headers, cookies, tokens or secrets', () => {
    const logs = capturedLogger();
    logs.logger.info(
      {
        req: {
          headers: {
            authorization: 'Bearer abc.def.ghi',
            cookie: 'session=s3cr3t',
            accept: 'application/json',
          },
        },
        token: 'top-level-token',
        call: { token: 'nested-token', options: { clientSecret: 'deep-secret' } },
        password: 'hunter2',
      },
      'request',
    );
    const text = logs.text();
    for (const secret of [
      'abc.def.ghi',
      's3cr3t',
      'top-level-token',
      'nested-token',
      'deep-secret',
      'hunter2',
    ]) {
      expect(text).not.toContain(secret);
    }
    expect(logs.lines()[0]).toMatchObject({
      req: { headers: { authorization: REDACTED, cookie: REDACTED, accept: 'application/json' } },
      token: REDACTED,
    });
  });

  it('drops lines below the configured level', () => {
    const logs = capturedLogger();
    logs.logger.level = 'warn';
    logs.logger.info('hidden');
    logs.logger.warn('shown');
    expect(logs.lines().map((line) => line.msg)).toEqual(['shown']);
  });
});
