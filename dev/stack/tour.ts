import type { CatalogItem } from '../../src/api/v1alpha1/index.js';
import { DECISION_CLIENT_ROLE } from '../../src/config/decision-clients.js';
import type { DevStackEnv } from './state-file.js';

export interface TourInput {
  env: DevStackEnv;
  stateDir: string;
  aclDocsUrl: string;
  item: CatalogItem | undefined;
}

/** What `npm start` prints once everything is ready: where things are, and a tour a newcomer can paste. */
export function tourText({ env, stateDir, aclDocsUrl, item }: TourInput): string {
  const lines = [
    'policy-grant-operator is running.',
    `  ACL API           ${env.ACL_URL}   (OpenAPI: ${aclDocsUrl})`,
    `  decision service  ${env.DECISION_URL}/v1/check`,
    `  controller        ${env.CONTROLLER_URL}/metrics`,
    `  kubeconfig        ${env.KUBECONFIG}`,
    `  state             ${stateDir}/env (logs in ${stateDir}/)`,
    '',
  ];
  if (!item)
    return [
      ...lines,
      'No sample CatalogItem was applied, so there is no tour. Ctrl-C stops everything.',
    ].join('\n');
  const { itemId, itemType, ownerId } = item.spec;
  const tour = [
    'A short tour (paste into another terminal in this folder):',
    `  set -a; . ${stateDir}/env; set +a`,
    `  OWNER=$(npm run --silent token -- --sub ${ownerId})`,
    `  CHECKER=$(npm run --silent token -- --sub $(node -p 'crypto.randomUUID()') --role ${DECISION_CLIENT_ROLE})   # an enforcement point: only those may check`,
    `  CONSUMER=$(node -p 'crypto.randomUUID()')`,
    `  curl -s -X POST "$ACL_URL/policy" -H "Authorization: Bearer $OWNER" -H 'Content-Type: application/json' \\`,
    `    -d '{"request":[{"policyType":"INDIVIDUAL","userId":"'$CONSUMER'","itemId":"${itemId}","itemType":"${itemType}",` +
      `"expiryTime":"2099-01-01T00:00:00Z","constraints":{"access":[{"accessType":"api"}]}}]}' | tee /tmp/grant.json`,
    `  POLICY=$(node -p 'JSON.parse(fs.readFileSync("/tmp/grant.json")).results[0].policyId')`,
    '  npm run --silent kubectl -- get policygrants -n "$NAMESPACE"        # ENFORCED turns True',
    `  CHECK='{"subject_type":"user","subject_id":"'$CONSUMER'","organisation_id":"","resource_type":"resource","resource_id":"${itemId}","relation":"api"}'`,
    `  curl -s -X POST "$DECISION_URL/v1/check" -H "Authorization: Bearer $CHECKER" -H 'Content-Type: application/json' -d "$CHECK"   # allowed: true`,
    `  curl -s -X POST "$DECISION_URL/v1/check" -H "Authorization: Bearer $OWNER" -H 'Content-Type: application/json' -d "$CHECK"     # 403: the owner is no enforcement point`,
    `  curl -s -X DELETE "$ACL_URL/policy?id=$POLICY" -H "Authorization: Bearer $OWNER"`,
    `  curl -s -X POST "$DECISION_URL/v1/check" -H "Authorization: Bearer $CHECKER" -H 'Content-Type: application/json' -d "$CHECK"   # allowed: false`,
    `  curl -s "$ACL_URL/audit" -H "Authorization: Bearer $OWNER"   # the owner's actions, newest first (docs/audit.md)`,
    '',
    'Ctrl-C stops everything.',
  ];
  return [...lines, ...tour].join('\n');
}
