/**
 * A verifier could not decide on the credentials: a dependency it needs (`jwks`, `kubernetes`) did not answer.
 * No verdict on the caller: the HTTP layer answers 503 naming the dependency.
 */
export class VerifierUnavailableError extends Error {
  constructor(
    readonly dependency: string,
    options?: { cause?: unknown },
  ) {
    super(`${dependency} is unavailable`, options);
    this.name = 'VerifierUnavailableError';
  }
}

/** A verifier had more verifications queued than it takes (`what`): the HTTP layer answers 503 with Retry-After. */
export class VerifierBusyError extends Error {
  constructor(readonly what: string) {
    super(`${what} is busy; retry later`);
    this.name = 'VerifierBusyError';
  }
}
