import type { z } from 'zod';
import { AccessRequestSpecSchema, AccessRequestStatusSchema } from './access-request.js';
import { CatalogItemSpecSchema } from './catalog-item.js';
import { AgentSpecSchema, DelegationSpecSchema, DelegationStatusSchema } from './delegation.js';
import {
  ACCESS_REQUEST_KIND,
  ACCESS_REQUEST_PLURAL,
  AGENT_KIND,
  AGENT_PLURAL,
  API_GROUP,
  API_VERSION,
  CATALOG_ITEM_KIND,
  CATALOG_ITEM_PLURAL,
  GRANT_CLAIM_KIND,
  GRANT_CLAIM_PLURAL,
  DELEGATION_KIND,
  DELEGATION_PLURAL,
  MEMBERSHIP_KIND,
  MEMBERSHIP_PLURAL,
  POLICY_GRANT_KIND,
  POLICY_GRANT_PLURAL,
} from './group-version.js';
import { GrantClaimSpecSchema } from './grant-claim.js';
import { MembershipSpecSchema, MembershipStatusSchema } from './membership.js';
import { PolicyGrantSpecSchema, PolicyGrantStatusSchema } from './policy-grant.js';
import { toStructuralSchema, type StructuralSchema } from './structural-schema.js';

// The CustomResourceDefinitions of the API group, built from the zod schemas (the one source of truth).
// hack/generate-crds.ts writes them to crds/; a unit test fails when crds/ is not what this builds.

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description: string;
  priority?: number;
}

export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string };
  spec: {
    group: string;
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      shortNames: string[];
      categories?: string[];
    };
    scope: 'Namespaced' | 'Cluster';
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      schema: { openAPIV3Schema: StructuralSchema };
      subresources?: { status: Record<string, never> };
      additionalPrinterColumns: PrinterColumn[];
    }[];
  };
}

interface ResourceDefinition {
  kind: string;
  plural: string;
  scope: 'Namespaced' | 'Cluster';
  shortNames: string[];
  /** Default: the acl category; none for internal kinds. */
  categories?: string[];
  description: string;
  spec: z.ZodType;
  status?: z.ZodType;
  printerColumns: PrinterColumn[];
}

/**
 * `kubectl get acl` lists every kind that users write or read. Not also `policygrant`: kubectl expands categories before it
 * resolves resource names, so that category would turn `kubectl get policygrant <name>` into a listing
 * of both kinds (and an error).
 */
const CATEGORIES = ['acl'];

const ENFORCED = '.status.conditions[?(@.type=="Enforced")]';

const AGE_COLUMN: PrinterColumn = {
  name: 'Age',
  type: 'date',
  jsonPath: '.metadata.creationTimestamp',
  description: 'Time since the object was created.',
};

export function policyGrantCrd(): CustomResourceDefinition {
  return customResourceDefinition({
    kind: POLICY_GRANT_KIND,
    plural: POLICY_GRANT_PLURAL,
    scope: 'Namespaced',
    shortNames: ['pgrant'],
    description:
      'A policy grant: gives a user (INDIVIDUAL) or the members of organisations (GROUP) access of the ' +
      'listed types to a catalog item until it expires or is revoked. The policy id is metadata.uid.',
    spec: PolicyGrantSpecSchema,
    status: PolicyGrantStatusSchema,
    printerColumns: [
      column('Type', '.spec.policyType', 'INDIVIDUAL or GROUP.'),
      column('Consumer', '.spec.userId', 'The consumer user of an INDIVIDUAL grant.'),
      column('Item', '.spec.itemId', 'The item the grant is on.'),
      // Not access[*].accessType: the apiserver prints only the first match of a column's JSONPath, so the
      // controller writes the list as one string.
      column(
        'Access',
        '.status.access',
        'The access types granted (api,file); empty until the first reconcile.',
      ),
      column('State', '.status.state', 'ACTIVE, DELETED or EXPIRED.'),
      column('Enforced', `${ENFORCED}.status`, 'Whether SpiceDB enforces the grant.'),
      column('Expiry', '.spec.expiryTime', 'When the grant expires.'),
      AGE_COLUMN,
      {
        ...column('Orgs', '.spec.constraints.subjects.allowedOrgIds', 'Organisations of a GROUP grant.'),
        priority: 1,
      },
      {
        ...column(
          'Binding',
          '.status.namespaceBinding',
          "The organisation the grant's namespace is bound to, <unbound>, or <acl-namespace>.",
        ),
        priority: 1,
      },
      { ...column('Reason', `${ENFORCED}.reason`, 'Reason of the Enforced condition.'), priority: 1 },
      {
        ...column(
          'Message',
          `${ENFORCED}.message`,
          'Why the grant is or is not enforced; names the namespace binding when that is the reason.',
        ),
        priority: 1,
      },
    ],
  });
}

export function catalogItemCrd(): CustomResourceDefinition {
  return customResourceDefinition({
    kind: CATALOG_ITEM_KIND,
    plural: CATALOG_ITEM_PLURAL,
    scope: 'Cluster',
    shortNames: ['ci', 'citem'],
    description:
      'A catalog item that policy grants can name: its owner, its organisation and the access types ' +
      'grants on it may use. Two CatalogItems with one itemId make the item ambiguous, and grants on it are denied.',
    spec: CatalogItemSpecSchema,
    printerColumns: [
      column('Item', '.spec.itemId', 'The item id that grants name.'),
      column('Type', '.spec.itemType', 'The item type.'),
      column('Owner', '.spec.ownerId', 'The provider user who owns the item.'),
      column('Organisation', '.spec.organisationId', 'The organisation of the item.'),
      column('Access', '.spec.accessTypes', 'Access types that grants on the item may use.'),
      AGE_COLUMN,
    ],
  });
}

export function membershipCrd(): CustomResourceDefinition {
  return customResourceDefinition({
    kind: MEMBERSHIP_KIND,
    plural: MEMBERSHIP_PLURAL,
    scope: 'Namespaced',
    shortNames: ['mem', 'pgmember'],
    description:
      'A member of an organisation, or of a group within it: GROUP grants give access to the members of ' +
      'their organisations, and a user is a member only while a Membership says so (default deny). Written ' +
      'by the ACL API from membership events and snapshots, or applied by hand; removal keeps the object ' +
      'with spec.removedAt set.',
    spec: MembershipSpecSchema,
    status: MembershipStatusSchema,
    printerColumns: [
      column('Organisation', '.spec.organisationId', 'The organisation.'),
      column('Group', '.spec.groupId', 'The group within the organisation, if any.'),
      column('User', '.spec.userId', 'The member user.'),
      column('Removed', '.spec.removedAt', 'When the membership was removed, if it was.'),
      column('Enforced', `${ENFORCED}.status`, 'Whether SpiceDB enforces the membership.'),
      AGE_COLUMN,
      { ...column('Reason', `${ENFORCED}.reason`, 'Reason of the Enforced condition.'), priority: 1 },
      { ...column('Changed', '.spec.changedAt', 'Time of the event that set the state.'), priority: 1 },
    ],
  });
}

/** Internal bookkeeping, so in no category: `kubectl get acl` shows what users write and read. */
export function grantClaimCrd(): CustomResourceDefinition {
  return customResourceDefinition({
    kind: GRANT_CLAIM_KIND,
    plural: GRANT_CLAIM_PLURAL,
    scope: 'Namespaced',
    shortNames: ['gclaim'],
    categories: [],
    description:
      'Internal bookkeeping of the ACL API, not for users to write: the claim that makes "no two active ' +
      'grants for the same subject, item and access type" hold across replicas. One object per (subject, ' +
      "item, access type), named claim-<SHA-256 of the triple>, in the ACL API's namespace, naming the " +
      'PolicyGrant that holds it. Revoking the grant releases it; a claim whose grant is revoked, expired ' +
      'or gone is taken over by the next create.',
    spec: GrantClaimSpecSchema,
    printerColumns: [
      column('Subject', '.spec.subject', 'user:<uuid> or organization:<uuid>.'),
      column('Item', '.spec.itemId', 'The item the claimed access is on.'),
      column('Access', '.spec.accessType', 'The claimed access type.'),
      column('Grant', '.spec.grantName', 'The PolicyGrant that holds the claim.'),
      column('State', '.spec.state', 'pending or bound.'),
      AGE_COLUMN,
      { ...column('Pending', '.spec.pendingSince', 'When the claim became pending.'), priority: 1 },
    ],
  });
}

export function delegationCrd(): CustomResourceDefinition {
  return customResourceDefinition({
    kind: DELEGATION_KIND,
    plural: DELEGATION_PLURAL,
    scope: 'Namespaced',
    shortNames: ['dlg', 'pgdelegation'],
    description:
      'A delegation of access on an item to an agent by its owner: the agent is allowed only while the ' +
      'delegation is active AND the owner holds the access (viewer, editor, api for querier) itself. ' +
      'Written by the ACL API (POST /v2/delegations) or applied by hand; revocation keeps the object with ' +
      'spec.revokedAt set. Enforced only while the Agent object of the agent names the same owner.',
    spec: DelegationSpecSchema,
    status: DelegationStatusSchema,
    printerColumns: [
      column('Agent', '.spec.agentId', 'The agent the access is delegated to.'),
      column('Owner', '.spec.ownerId', 'The delegating user, owner of the agent.'),
      column('Item', '.spec.itemId', 'The item the delegation is on.'),
      column('Relation', '.spec.relation', 'viewer, editor or querier.'),
      column('Expiry', '.spec.expiryTime', 'When the delegation expires.'),
      column('Enforced', `${ENFORCED}.status`, 'Whether SpiceDB enforces the delegation.'),
      AGE_COLUMN,
      { ...column('Reason', `${ENFORCED}.reason`, 'Reason of the Enforced condition.'), priority: 1 },
      { ...column('Revoked', '.spec.revokedAt', 'When the delegation was revoked, if it was.'), priority: 1 },
    ],
  });
}

export function agentCrd(): CustomResourceDefinition {
  return customResourceDefinition({
    kind: AGENT_KIND,
    plural: AGENT_PLURAL,
    scope: 'Namespaced',
    shortNames: ['pgagent'],
    description:
      'An agent and the one user it acts for. The name is derived from the agent id (agent-<sha256 prefix>), ' +
      'so the first delegation of an agent creates it and a delegation by anyone else meets it: one owner per agent.',
    spec: AgentSpecSchema,
    printerColumns: [
      column('Agent', '.spec.agentId', 'The agent id.'),
      column('Owner', '.spec.ownerId', 'The user the agent acts for.'),
      AGE_COLUMN,
    ],
  });
}

export function accessRequestCrd(): CustomResourceDefinition {
  return customResourceDefinition({
    kind: ACCESS_REQUEST_KIND,
    plural: ACCESS_REQUEST_PLURAL,
    scope: 'Namespaced',
    shortNames: ['areq', 'pgrequest'],
    description:
      'A consumer’s request for access to a catalog item, decided by the item owner or an org_admin of its ' +
      'organisation (POST and PATCH /v2/access-requests). Approval creates the PolicyGrant asked for, ' +
      'labelled with the request name, and lists its id in status.policyIds. A request pending too long ' +
      'becomes EXPIRED (the controller). The request id is metadata.uid.',
    spec: AccessRequestSpecSchema,
    status: AccessRequestStatusSchema,
    printerColumns: [
      column('Consumer', '.spec.consumerId', 'The user who asks for access.'),
      column('Item', '.spec.itemId', 'The item access is asked for.'),
      column('Access', '.spec.access', 'The access types asked for.'),
      column('State', '.status.state', 'PENDING, APPROVED, REJECTED, WITHDRAWN or EXPIRED.'),
      AGE_COLUMN,
      { ...column('Decided', '.status.decidedBy', 'Who decided the request.'), priority: 1 },
      { ...column('Policies', '.status.policyIds', 'The policies the approval created.'), priority: 1 },
    ],
  });
}

export function customResourceDefinitions(): CustomResourceDefinition[] {
  return [
    policyGrantCrd(),
    catalogItemCrd(),
    membershipCrd(),
    grantClaimCrd(),
    delegationCrd(),
    agentCrd(),
    accessRequestCrd(),
  ];
}

function column(name: string, jsonPath: string, description: string): PrinterColumn {
  return { name, type: 'string', jsonPath, description };
}

function customResourceDefinition(resource: ResourceDefinition): CustomResourceDefinition {
  const singular = resource.kind.toLowerCase();
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${resource.plural}.${API_GROUP}` },
    spec: {
      group: API_GROUP,
      names: {
        kind: resource.kind,
        listKind: `${resource.kind}List`,
        plural: resource.plural,
        singular,
        shortNames: resource.shortNames,
        ...(resource.categories?.length === 0 ? {} : { categories: resource.categories ?? CATEGORIES }),
      },
      scope: resource.scope,
      versions: [
        {
          name: API_VERSION,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: objectSchema(resource) },
          ...(resource.status ? { subresources: { status: {} } } : {}),
          additionalPrinterColumns: resource.printerColumns,
        },
      ],
    },
  };
}

function objectSchema(resource: ResourceDefinition): StructuralSchema {
  return {
    type: 'object',
    description: resource.description,
    properties: {
      apiVersion: {
        type: 'string',
        description: `Versioned schema of this representation of an object: ${API_GROUP}/${API_VERSION}.`,
      },
      kind: { type: 'string', description: `The REST resource this object represents: ${resource.kind}.` },
      // The apiserver owns metadata's schema and rejects a CRD that says more than its type here.
      metadata: { type: 'object' },
      spec: toStructuralSchema(resource.spec),
      ...(resource.status ? { status: toStructuralSchema(resource.status) } : {}),
    },
    required: ['spec'],
  };
}
