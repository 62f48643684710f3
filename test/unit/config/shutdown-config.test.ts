import { describe, expect, it } from 'vitest';
import { readEnvironment } from '../../../src/config/environment.js';
import { drainMs, shutdownEnvironment } from '../../../src/config/shutdown-config.js';

describe('SHUTDOWN_DRAIN_SECONDS', () => {
  it('is the drain delay in seconds, none when unset', () => {
    expect(drainMs(readEnvironment(shutdownEnvironment, { SHUTDOWN_DRAIN_SECONDS: '5' }))).toBe(5_000);
    expect(drainMs(readEnvironment(shutdownEnvironment, {}))).toBe(0);
  });

  it('refuses what is not a whole number of seconds, naming the variable', () => {
    for (const value of ['-1', '2.5', 'soon'])
      expect(() => readEnvironment(shutdownEnvironment, { SHUTDOWN_DRAIN_SECONDS: value })).toThrow(
        /SHUTDOWN_DRAIN_SECONDS/,
      );
  });
});
