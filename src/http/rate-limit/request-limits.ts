/** At most `requests` in any window of `windowMs`. */
export interface RateLimit {
  readonly requests: number;
  readonly windowMs: number;
}

/** The limits a service applies to authenticated routes; each replica counts on its own (memory). */
export interface RequestLimits {
  /** Per authenticated subject, by route class (`check`, `read`, `write`); a class without one is unlimited. */
  readonly perSubject: Readonly<Record<string, RateLimit | undefined>>;
  /** Failed authentications per client address; further attempts with credentials get 429 unverified. */
  readonly failedAuthentication?: RateLimit;
}

export const NO_REQUEST_LIMITS: RequestLimits = { perSubject: {} };

/** `100 requests per 60 s`, for details and docs. */
export function describeRateLimit({ requests, windowMs }: RateLimit): string {
  return `${requests} requests per ${Math.ceil(windowMs / 1_000)} s`;
}
