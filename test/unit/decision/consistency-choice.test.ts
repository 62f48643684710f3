import { describe, expect, it } from 'vitest';
import { chooseConsistency } from '../../../src/decision/consistency-choice.js';
import type { ConsistencyInput } from '../../../src/decision/consistency-choice.js';

const current: ConsistencyInput = {
  watchCurrent: true,
  touched: undefined,
  callerToken: undefined,
  callerPosition: undefined,
};
const touched = { token: 'touch', position: 5 };

describe('chooseConsistency', () => {
  it('stays at minimize_latency when nothing recent touched the check and no token came', () => {
    expect(chooseConsistency(current)).toEqual({ source: 'minimize_latency' });
  });

  it('goes at least as fresh as the newest recent change of the resource or subject', () => {
    expect(chooseConsistency({ ...current, touched })).toEqual({ source: 'touched', token: 'touch' });
  });

  it('uses the caller’s token when nothing recent touched the check', () => {
    expect(chooseConsistency({ ...current, callerToken: 'mine' })).toEqual({
      source: 'caller_token',
      token: 'mine',
    });
  });

  it('uses whichever of the caller’s token and the recent change comes later in the Watch', () => {
    expect(chooseConsistency({ ...current, touched, callerToken: 'mine', callerPosition: 6 })).toEqual({
      source: 'caller_token',
      token: 'mine',
    });
    expect(chooseConsistency({ ...current, touched, callerToken: 'mine', callerPosition: 4 })).toEqual({
      source: 'touched',
      token: 'touch',
    });
  });

  it('goes to the head revision when the caller’s token cannot be ordered against a recent change', () => {
    expect(chooseConsistency({ ...current, touched, callerToken: 'mine' })).toEqual({ source: 'head' });
  });

  it('never answers from a quantized snapshot while the Watch is not current', () => {
    for (const input of [
      { ...current, watchCurrent: false },
      { ...current, watchCurrent: false, touched },
      { ...current, watchCurrent: false, callerToken: 'mine', callerPosition: 9 },
    ]) {
      expect(chooseConsistency(input)).toEqual({ source: 'head' });
    }
  });
});
