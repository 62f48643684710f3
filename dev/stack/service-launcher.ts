/** One of the stack's three services, however it runs. */
export interface LaunchedService {
  readonly name: string;
  /** Where it serves: the ACL API's base path included. */
  readonly url: string;
  /** The server root, where /healthz/*, /metrics and /docs are. */
  readonly rootUrl: string;
  /** The process it runs in: this one when it runs in process. */
  readonly pid: number;
  stop(): Promise<void>;
}

export interface LaunchedController extends LaunchedService {
  /** Resolves once the controller has compared SpiceDB with the custom resources once. */
  waitForFirstResync(timeoutMs: number): Promise<void>;
}

/** Starts each service with its environment (the same variables as in production). */
export interface ServiceLauncher {
  controller(env: NodeJS.ProcessEnv): Promise<LaunchedController>;
  decisionService(env: NodeJS.ProcessEnv): Promise<LaunchedService>;
  aclApi(env: NodeJS.ProcessEnv): Promise<LaunchedService>;
}
