import { z } from 'zod';
import { commaList } from './environment.js';

/** The role that makes a caller an enforcement point when DECISION_CLIENT_ROLES is not set. */
export const DECISION_CLIENT_ROLE = 'decision_client';

/**
 * DECISION_CLIENT_ROLES, read by the decision service (who may call /v1/check) and the ACL API (which
 * applications may call POST /verify for any user): one setting, so that the two oracles of who may access what
 * answer the same enforcement points.
 */
export const decisionClientRoles = commaList
  .pipe(z.array(z.string()).min(1, 'at least a role'))
  .default([DECISION_CLIENT_ROLE]);
