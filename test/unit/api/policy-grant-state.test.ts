import { describe, expect, it } from 'vitest';
import { derivedState } from '../../../src/api/v1alpha1/index.js';

const now = new Date('2026-06-01T12:00:00Z');

describe('derivedState', () => {
  it('is ACTIVE before expiryTime', () => {
    expect(derivedState({ spec: { expiryTime: '2026-06-01T12:00:01Z' } }, now)).toBe('ACTIVE');
  });

  it('is EXPIRED at expiryTime and after it', () => {
    expect(derivedState({ spec: { expiryTime: '2026-06-01T12:00:00Z' } }, now)).toBe('EXPIRED');
    expect(derivedState({ spec: { expiryTime: '2025-01-01T00:00:00Z' } }, now)).toBe('EXPIRED');
  });

  it('compares instants, not strings: an offset counts', () => {
    // 13:30+02:00 is 11:30Z, before now.
    expect(derivedState({ spec: { expiryTime: '2026-06-01T13:30:00+02:00' } }, now)).toBe('EXPIRED');
    expect(derivedState({ spec: { expiryTime: '2026-06-01T12:30:00.5-01:00' } }, now)).toBe('ACTIVE');
  });

  it('is DELETED once revoked, expired or not', () => {
    const revokedAt = '2026-05-01T00:00:00Z';
    expect(derivedState({ spec: { expiryTime: '2030-01-01T00:00:00Z', revokedAt } }, now)).toBe('DELETED');
    expect(derivedState({ spec: { expiryTime: '2020-01-01T00:00:00Z', revokedAt } }, now)).toBe('DELETED');
  });

  it('treats an expiryTime that does not parse as expired (never active by accident)', () => {
    expect(derivedState({ spec: { expiryTime: 'soon' } }, now)).toBe('EXPIRED');
  });
});
