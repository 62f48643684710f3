import { randomUUID } from 'node:crypto';
import type { CatalogItem } from '../../../src/api/v1alpha1/index.js';
import { DECISION_CLIENT_ROLE } from '../../../src/config/decision-clients.js';
import { PLATFORM_SEARCH_CLIENT_ROLE } from '../../../src/decision/check-callers.js';
import type { ContractRun } from './schemathesis.js';

/** A running stack as the contract runs see it: the three services, and its identity provider. */
export interface ContractStack {
  /** The ACL API with its base path (e.g. `http://127.0.0.1:8080/v2`). */
  aclUrl: string;
  decisionUrl: string;
  controllerUrl: string;
  /** A token the stack's services accept. */
  token(sub: string, options: { roles: string[]; org?: string }): Promise<string>;
  /** The stack's CatalogItems. */
  catalog(): Promise<CatalogItem['spec'][]>;
}

export type ContractTarget = Pick<ContractRun, 'documentUrl' | 'headers' | 'hookEnv'>;

export interface ContractDocument {
  /** Which service, and as whom it is fuzzed. */
  title: string;
  target(stack: ContractStack): Promise<ContractTarget>;
}

// Spelt as schemathesis's ignored_auth check looks for it, so that the check can leave it out.
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** The service root's GET /docs (the ACL URL carries the base path; the document lives at the root). */
const documentOf = (serviceUrl: string) => new URL('/docs', serviceUrl).href;

/**
 * The catalog as semantic_rules.py reads it (CONTRACT_CATALOG): positive creates name one of these items, with
 * its itemType and access types, so that they reach the logic behind the item lookup instead of its 404.
 */
const catalogHookEnv = (items: CatalogItem['spec'][]) => ({
  CONTRACT_CATALOG: JSON.stringify(
    items.map(({ itemId, itemType, accessTypes }) => ({ itemId, itemType, accessTypes })),
  ),
});

/** The three documents, each with the caller it is fuzzed as: the CI test and `contract:explore` run these. */
export const CONTRACT_DOCUMENTS = {
  acl: {
    title: 'the ACL API, as a cos_admin who is also an org_admin',
    target: async (stack) => ({
      documentUrl: documentOf(stack.aclUrl),
      headers: bearer(
        await stack.token(randomUUID(), { roles: ['cos_admin', 'org_admin'], org: randomUUID() }),
      ),
      hookEnv: catalogHookEnv(await stack.catalog()),
    }),
  },
  decision: {
    title: 'the decision service, as an enforcement point',
    target: async (stack) => ({
      documentUrl: documentOf(stack.decisionUrl),
      // An enforcement point that checks and searches every organisation: every route answers it.
      headers: bearer(
        await stack.token(randomUUID(), { roles: [DECISION_CLIENT_ROLE, PLATFORM_SEARCH_CLIENT_ROLE] }),
      ),
    }),
  },
  controller: {
    title: 'the controller (operational routes)',
    target: (stack) => Promise.resolve({ documentUrl: documentOf(stack.controllerUrl), headers: {} }),
  },
} as const satisfies Record<string, ContractDocument>;

export type ContractDocumentName = keyof typeof CONTRACT_DOCUMENTS;
