import { z } from 'zod';
import { DEFAULT_CHECK_CALLERS } from '../decision/check-callers.js';
import { commaList } from './environment.js';

/**
 * DECISION_CLIENT_ROLES, read by the decision service (who may call /v1/check) and the ACL API (which
 * applications may call POST /verify for any user): one setting, so that the two oracles of who may access what
 * answer the same enforcement points.
 */
export const decisionClientRoles = commaList
  .pipe(z.array(z.string()).min(1, 'at least a role'))
  .default([...DEFAULT_CHECK_CALLERS.roles]);
