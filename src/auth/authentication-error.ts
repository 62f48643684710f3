/**
 * Credentials were missing or not accepted. `reason` is short and safe to show a caller ("token expired",
 * "invalid token"); the precise failure stays in `cause` for the logs.
 */
export class AuthenticationError extends Error {
  constructor(
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(reason, options);
    this.name = 'AuthenticationError';
  }
}
