import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../src/config/environment.js';
import {
  aclRequestLimits,
  decisionRequestLimits,
  parseRateLimit,
  scryptBound,
} from '../../../src/config/rate-limit-config.js';

describe('parseRateLimit', () => {
  it('reads <requests>/<window> with any duration', () => {
    expect(parseRateLimit('600/1m')).toEqual({ requests: 600, windowMs: 60_000 });
    expect(parseRateLimit(' 5/500ms ')).toEqual({ requests: 5, windowMs: 500 });
    expect(parseRateLimit('100/1h30m')).toEqual({ requests: 100, windowMs: 5_400_000 });
  });

  it('reads 0 and off as no limit', () => {
    expect(parseRateLimit('0')).toBeUndefined();
    expect(parseRateLimit('off')).toBeUndefined();
    expect(parseRateLimit('OFF')).toBeUndefined();
  });

  it('refuses anything else, naming the value', () => {
    for (const text of ['600', '0/1m', '-1/1m', '600/minute', '600/', '/1m', '1.5/1m', 'on']) {
      expect(() => parseRateLimit(text), text).toThrow(`"${text}" is not <requests>/<window>`);
    }
  });
});

describe('request limits from the environment', () => {
  it('defaults: check high, reads and writes per caller, 20 failed authentications a minute per address', () => {
    expect(decisionRequestLimits({})).toEqual({
      perSubject: { check: { requests: 60_000, windowMs: 60_000 } },
      failedAuthentication: { requests: 20, windowMs: 60_000 },
    });
    expect(aclRequestLimits({})).toEqual({
      perSubject: {
        read: { requests: 6_000, windowMs: 60_000 },
        write: { requests: 1_200, windowMs: 60_000 },
      },
      failedAuthentication: { requests: 20, windowMs: 60_000 },
    });
    expect(scryptBound({})).toEqual({ concurrency: 1, queue: 16 });
  });

  it('takes each class from its variable, off disabling it', () => {
    const env = { RATE_LIMIT_READ: 'off', RATE_LIMIT_WRITE: '10/1s', AUTH_FAILURE_LIMIT: '0' };
    expect(aclRequestLimits(env)).toEqual({
      perSubject: { read: undefined, write: { requests: 10, windowMs: 1_000 } },
    });
    expect(scryptBound({ BASIC_AUTH_CONCURRENCY: '1', BASIC_AUTH_QUEUE: '0' })).toEqual({
      concurrency: 1,
      queue: 0,
    });
  });

  it('names the variable of a malformed value', () => {
    expect(() => decisionRequestLimits({ RATE_LIMIT_CHECK: 'lots' })).toThrow(ConfigurationError);
    expect(() => decisionRequestLimits({ RATE_LIMIT_CHECK: 'lots' })).toThrow(
      /RATE_LIMIT_CHECK: "lots" is not/,
    );
    expect(() => scryptBound({ BASIC_AUTH_CONCURRENCY: '0' })).toThrow(/BASIC_AUTH_CONCURRENCY/);
  });
});
