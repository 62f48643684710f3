/** The body of a non-2xx answer, or of a watch ERROR event: a metav1.Status. */
export interface ApiStatus {
  kind?: string;
  code?: number;
  reason?: string;
  message?: string;
}

/** An answer of the kube-apiserver with an error status code. */
export class KubeApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly reason: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'KubeApiError';
  }

  static fromStatus(status: ApiStatus, fallbackCode = 500): KubeApiError {
    const code = status.code ?? fallbackCode;
    return new KubeApiError(code, status.reason, status.message ?? `kube-apiserver answered ${code}`);
  }

  static fromBody(statusCode: number, body: string): KubeApiError {
    try {
      return KubeApiError.fromStatus(JSON.parse(body) as ApiStatus, statusCode);
    } catch {
      return new KubeApiError(
        statusCode,
        undefined,
        body.slice(0, 200) || `kube-apiserver answered ${statusCode}`,
      );
    }
  }
}

function hasStatusCode(err: unknown, code: number): boolean {
  return err instanceof KubeApiError && err.statusCode === code;
}

/** 410 Gone: the resourceVersion asked for is older than what the server keeps; relist. */
export const isGone = (err: unknown): boolean => hasStatusCode(err, 410);
export const isConflict = (err: unknown): boolean => hasStatusCode(err, 409);
export const isNotFound = (err: unknown): boolean => hasStatusCode(err, 404);
export const isAlreadyExists = (err: unknown): boolean =>
  isConflict(err) && (err as KubeApiError).reason === 'AlreadyExists';
/** 409 from an update or delete whose resourceVersion (or uid) precondition no longer holds. */
export const isPreconditionConflict = (err: unknown): boolean => isConflict(err) && !isAlreadyExists(err);

/** The request never got an answer: refused, reset, timed out, aborted, TLS failed. */
export class KubernetesUnreachableError extends Error {
  override readonly name = 'KubernetesUnreachableError';
}
