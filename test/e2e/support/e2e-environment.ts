/** What the end-to-end global setup hands to the test files. */
export interface E2eEnvironment {
  /** The gateway in front of the stack: `/acl/...` (strip-prefix onto the ACL base path), `/v1/check`. */
  gatewayUrl: string;
  /** The ACL API itself, with its base path (e.g. `http://127.0.0.1:8080/v2`). */
  aclUrl: string;
  /** The decision service itself (its operational routes: /metrics). */
  decisionUrl: string;
  /** The controller's operational routes. */
  controllerUrl: string;
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
