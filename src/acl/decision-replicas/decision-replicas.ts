/**
 * Where the decision service's replicas are: every Ready replica must confirm a write's ZedToken before
 * `Prefer: wait` reports the write enforced (replica-confirmations.ts).
 */
export interface DecisionReplicas {
  /** Base URLs of the Ready replicas; undefined while they cannot be known (the list has not arrived). */
  ready(): readonly string[] | undefined;
  start(): void;
  stop(): Promise<void>;
}

/** A fixed list (the development stack, one process, a test): each replica counts as Ready. */
export function staticReplicas(urls: readonly string[]): DecisionReplicas {
  const ready = urls.map((url) => url.replace(/\/+$/, ''));
  return { ready: () => ready, start: () => undefined, stop: () => Promise.resolve() };
}
