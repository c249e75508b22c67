import { describe, expect, it } from 'vitest';
import { grantedScopes } from './oauth-token.resolver.js';

describe('grantedScopes', () => {
  it("keeps only the claimed scopes the client is registered with now", () => {
    const registered = new Set(['workflows:read']);
    expect(grantedScopes('workflows:read webhooks:read', registered)).toEqual(['workflows:read']);
    expect(grantedScopes('webhooks:read webhooks:write', registered)).toEqual([]);
    expect(grantedScopes('', registered)).toEqual([]);
  });

  it('drops repeats and empty parts, keeping the claim order', () => {
    expect(grantedScopes('b  a b', new Set(['a', 'b', 'c']))).toEqual(['b', 'a']);
  });
});
