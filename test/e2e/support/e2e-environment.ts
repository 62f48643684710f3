/** What the end-to-end global setup hands to the test files. */
export interface E2eEnvironment {
  /** The gateway in front of the stack: `/acl/...` (strip-prefix onto the ACL base path), `/v1/check`. */
  gatewayUrl: string;
  /** The decision service itself (its operational routes: /metrics). */
  decisionUrl: string;
  kubeconfig: string;
  kubectl: string;
  /** Where the ACL API writes grants. */
  namespace: string;
  stateDir: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    e2e: E2eEnvironment;
  }
}
