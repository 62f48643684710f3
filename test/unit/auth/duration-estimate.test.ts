import { describe, expect, it } from 'vitest';
import { DurationEstimate } from '../../../src/auth/duration-estimate.js';

describe('DurationEstimate', () => {
  it('starts at 0, takes the first measurement, then moves a fifth of the way to each new one', async () => {
    let now = 0;
    const estimate = new DurationEstimate(() => now);
    expect(estimate.typicalMs()).toBe(0);
    const taking = (ms: number) => async () => {
      now += ms;
      return ms;
    };
    expect(await estimate.measure(taking(100))).toBe(100);
    expect(estimate.typicalMs()).toBe(100);
    await estimate.measure(taking(200));
    expect(estimate.typicalMs()).toBe(120);
  });

  it('measures failed tasks too', async () => {
    let now = 0;
    const estimate = new DurationEstimate(() => now);
    const failing = async () => {
      now += 50;
      throw new Error('wrong');
    };
    await expect(estimate.measure(failing)).rejects.toThrow('wrong');
    expect(estimate.typicalMs()).toBe(50);
  });
});
