import type { Membership } from '../../api/v1alpha1/index.js';
import { ProjectedReconciler } from '../projected/projected-reconciler.js';

/** Brings one Membership's tuples and status in line with its spec (ProjectedReconciler). */
export class MembershipReconciler extends ProjectedReconciler<Membership> {}
