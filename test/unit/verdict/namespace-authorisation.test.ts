import { describe, expect, it } from 'vitest';
import {
  authoriseNamespace,
  namespaceBinding,
  namespaceBindingText,
  ORGANISATION_LABEL,
} from '../../../src/verdict/namespace-authorisation.js';
import { ORG_A, ORG_B } from '../controller/support/fakes.js';

const base = { aclNamespace: 'policy-grant-system', itemOrganisation: ORG_A };

describe('authoriseNamespace', () => {
  it("authorises every grant in the ACL API's namespace", () => {
    expect(
      authoriseNamespace({
        ...base,
        grantNamespace: 'policy-grant-system',
        namespaceOrganisation: undefined,
      }),
    ).toEqual({
      authorised: true,
    });
    expect(
      authoriseNamespace({ ...base, grantNamespace: 'policy-grant-system', namespaceOrganisation: ORG_B }),
    ).toEqual({
      authorised: true,
    });
  });

  it("authorises a grant in a namespace bound to the item's organisation", () => {
    expect(authoriseNamespace({ ...base, grantNamespace: 'team-a', namespaceOrganisation: ORG_A })).toEqual({
      authorised: true,
    });
  });

  it('refuses an unbound namespace, saying how to bind it', () => {
    const refused = authoriseNamespace({
      ...base,
      grantNamespace: 'team-a',
      namespaceOrganisation: undefined,
    });
    expect(refused).toEqual({
      authorised: false,
      message: expect.stringContaining('"team-a" is not bound to an organisation'),
    });
    expect(refused.authorised || refused.message).toContain(`${ORGANISATION_LABEL}=${ORG_A}`);
  });

  it("refuses a namespace bound to another organisation than the item's", () => {
    const refused = authoriseNamespace({ ...base, grantNamespace: 'team-b', namespaceOrganisation: ORG_B });
    expect(refused).toEqual({
      authorised: false,
      message: expect.stringContaining(`bound to organisation ${ORG_B}`),
    });
  });
});

describe('namespaceBinding', () => {
  const binding = (grantNamespace: string, namespaceOrganisation: string | undefined) =>
    namespaceBindingText(
      namespaceBinding({ grantNamespace, aclNamespace: base.aclNamespace, namespaceOrganisation }),
    );

  it("names the organisation of the namespace's label, or says it has none", () => {
    expect(binding('team-a', ORG_A)).toBe(ORG_A);
    expect(binding('team-a', undefined)).toBe('<unbound>');
  });

  it("says the ACL API's namespace is that, whatever its label: the verdict does not read it there", () => {
    expect(binding('policy-grant-system', undefined)).toBe('<acl-namespace>');
    expect(binding('policy-grant-system', ORG_B)).toBe('<acl-namespace>');
  });
});
