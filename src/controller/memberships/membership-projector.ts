import type { Membership } from '../../api/v1alpha1/index.js';
import { ProjectedProjector, type ProjectorOptions } from '../projected/projected-projector.js';

export type MembershipProjectorOptions = ProjectorOptions<Membership>;

/** Writes or withdraws one membership's tuples; a group's ownership, shared by its members, stays while one counts. */
export class MembershipProjector extends ProjectedProjector<Membership> {}
