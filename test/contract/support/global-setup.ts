import { stackSetup } from '../../e2e/support/global-setup.js';

// The contract test's stack: the end-to-end suite's, without the bound on failed authentications. schemathesis
// sends invalid credentials to every operation (its ignored_auth check) from one address, far more than that
// bound allows in a window, and the answer it checks is the contract's 401/403, not the abuse defence's 429
// (which has tests of its own: test/integration/acl/rate-limits.test.ts, test/integration/decision/).
export default stackSetup({ AUTH_FAILURE_LIMIT: 'off' });
