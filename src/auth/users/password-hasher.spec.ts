import { describe, expect, it } from 'vitest';
import { hashPassword, verifyPassword } from './password-hasher.js';

// scrypt with N=2^17 takes ~0.3 s on an idle core and several seconds on a loaded machine (measured 4 s at load 16).
describe('password hasher', { timeout: 60_000 }, () => {
  it('verifies the right password and refuses a wrong one', async () => {
    const encoded = await hashPassword('correct horse battery staple');
    expect(encoded).toMatch(/^scrypt\$131072\$8\$1\$/);
    await expect(verifyPassword('correct horse battery staple', encoded)).resolves.toBe(true);
    await expect(verifyPassword('correct horse battery stapler', encoded)).resolves.toBe(false);
  });

  it('salts every hash', async () => {
    expect(await hashPassword('same')).not.toBe(await hashPassword('same'));
  });

  it('refuses an encoding it does not know', async () => {
    await expect(verifyPassword('x', 'md5$abc')).resolves.toBe(false);
  });
});
