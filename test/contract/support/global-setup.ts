import { stackSetup } from '../../e2e/support/global-setup.js';
import { fuzzingStackEnv } from './fuzzing.js';

// The contract test's stack: the end-to-end suite's, with the limits of test/contract/fuzzing.env raised (that
// file says why), as `npm run start:contract` runs it for `npm run contract:explore`.
export default stackSetup(fuzzingStackEnv());
