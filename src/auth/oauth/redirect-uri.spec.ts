import { describe, expect, it } from 'vitest';
import { redirectUriProblem } from './redirect-uri.js';

describe('redirectUriProblem', () => {
  it('accepts https anywhere and http on loopback IP literals only', () => {
    for (const uri of ['https://app.example.com/callback', 'https://app.example.com:8443/cb?x=1', 'http://127.0.0.1:8080/cb', 'http://127.3.4.5/cb', 'http://[::1]:9000/cb']) {
      expect(redirectUriProblem(uri), uri).toBeUndefined();
    }
  });

  it('refuses plain http elsewhere, localhost, other schemes, fragments, user info, relative and over-long URIs', () => {
    for (const uri of [
      'http://app.example.com/cb',
      'http://localhost:8080/cb',
      'http://10.0.0.1/cb',
      'javascript:alert(1)',
      'com.example.app:/cb',
      'https://app.example.com/cb#frag',
      'https://user:pw@app.example.com/cb',
      '/callback',
      'https://app.example.com/ cb',
      `https://app.example.com/${'a'.repeat(2000)}`,
    ]) {
      expect(redirectUriProblem(uri), uri).toBeTypeOf('string');
    }
  });
});
