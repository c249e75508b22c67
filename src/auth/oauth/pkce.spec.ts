import { describe, expect, it } from 'vitest';
import { isPkceValue, verifierMatches } from './pkce.js';

describe('PKCE S256', () => {
  // RFC 7636 Appendix B.
  const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
  const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

  it('matches the RFC example and refuses any other verifier', () => {
    expect(verifierMatches(verifier, challenge)).toBe(true);
    expect(verifierMatches(`${verifier.slice(0, -1)}j`, challenge)).toBe(false);
    expect(verifierMatches(challenge, challenge)).toBe(false);
  });

  it('refuses verifiers of the wrong length or alphabet', () => {
    expect(isPkceValue('a'.repeat(42))).toBe(false);
    expect(isPkceValue('a'.repeat(129))).toBe(false);
    expect(isPkceValue(`${'a'.repeat(42)}+`)).toBe(false);
    expect(isPkceValue('a'.repeat(43))).toBe(true);
    expect(verifierMatches('short', challenge)).toBe(false);
  });
});
