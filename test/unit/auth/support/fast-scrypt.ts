import type { ScryptParameters } from '../../../../src/auth/secret-hash.js';

/** Cheap parameters so that tests stay fast; the stored format is the same. */
export const FAST: ScryptParameters = { cost: 2 ** 10, blockSize: 8, parallelization: 1 };
