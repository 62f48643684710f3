export { LAST_APPLIED_ANNOTATION, stripForCache } from './cache-transform.js';
export { InternPool } from './intern-pool.js';
export { Controller, TerminalError, watchesMapped } from './controller.js';
export type { ControllerOptions, ReconcileResult, Reconciler, WatchSource } from './controller.js';
export { Informer } from './informer.js';
export type { EventHandler, InformerOptions } from './informer.js';
export { LeaderElector } from './leader-election.js';
export type { LeaderElectionOptions, StoppedLeadingReason } from './leader-election.js';
export { Manager } from './manager.js';
export type {
  InformerSpec,
  ManagedControllerOptions,
  ManagerLeaderElection,
  ManagerOptions,
} from './manager.js';
export { objectKey, parseObjectKey } from './object-key.js';
export {
  BucketRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
  defaultControllerRateLimiter,
} from './rate-limiter.js';
export type { RateLimiter } from './rate-limiter.js';
export { WorkQueue } from './workqueue.js';
export type { WorkQueueOptions } from './workqueue.js';
