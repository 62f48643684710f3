import { describe, expect, it } from 'vitest';
import { sleep } from '../../../dev/wait/sleep.js';
import { until } from '../../../dev/wait/until.js';

describe('until', () => {
  it('returns once the check holds, asking again after each poll', async () => {
    let asked = 0;
    await until(() => ++asked === 3, 'the third answer', 1_000, 1);
    expect(asked).toBe(3);
  });

  it('fails after the timeout, naming what it waited for and how long', async () => {
    await expect(until(() => false, 'the moon', 20, 1)).rejects.toThrow(
      'timed out after 20 ms waiting for the moon',
    );
  });

  it('throws the error a function builds, built only when the wait times out', async () => {
    let built = 0;
    const failure = () => {
      built += 1;
      return new Error('the log said why');
    };
    await until(() => true, failure, 20, 1);
    expect(built).toBe(0);
    await expect(until(() => false, failure, 20, 1)).rejects.toThrow('the log said why');
    expect(built).toBe(1);
  });

  it('ends at once with the error of a check that throws', async () => {
    const started = Date.now();
    const exited = until(
      () => {
        throw new Error('the process exited');
      },
      'readiness',
      60_000,
    );
    await expect(exited).rejects.toThrow('the process exited');
    expect(Date.now() - started).toBeLessThan(60_000);
  });
});

describe('sleep', () => {
  it('rejects at once when its signal aborts', async () => {
    const controller = new AbortController();
    const sleeping = sleep(60_000, controller.signal);
    controller.abort(new Error('stopping'));
    await expect(sleeping).rejects.toMatchObject({ name: 'AbortError' });
  });
});
