/**
 * The providers a channel account can use: which channel each serves and what its credentials look
 * like. Read when an account is created or updated (channel-account-input.ts); the connectors that
 * talk to each provider are in provider-connectors.ts.
 */
export interface CredentialRule {
  pattern: RegExp;
  /** Says what a valid value looks like, never the value given. */
  expected: string;
}

export interface ProviderDefinition {
  channel: 'whatsapp' | 'instagram' | 'voice';
  credentials: Readonly<Record<string, CredentialRule>>;
  /** Meta's webhooks: the GET verification handshake (verify_token) and X-Hub-Signature-256. */
  meta: boolean;
}

const TOKEN: CredentialRule = { pattern: /^[\x21-\x7e]{16,4096}$/, expected: '16 to 4096 printable characters without spaces' };
const APP_SECRET: CredentialRule = { pattern: /^[\x21-\x7e]{16,256}$/, expected: "the app's secret: 16 to 256 printable characters without spaces" };

export const PROVIDERS = {
  whatsapp_cloud: {
    channel: 'whatsapp',
    meta: true,
    credentials: {
      phone_number_id: { pattern: /^\d{1,32}$/, expected: "the number's Phone number ID (digits) from the WhatsApp Manager or the app's API Setup page" },
      access_token: TOKEN,
      app_secret: APP_SECRET,
    },
  },
  instagram: {
    channel: 'instagram',
    meta: true,
    credentials: {
      account_id: { pattern: /^\d{1,32}$/, expected: "the Instagram professional account's ID (digits)" },
      access_token: TOKEN,
      app_secret: APP_SECRET,
    },
  },
  twilio: {
    channel: 'voice',
    meta: false,
    credentials: {
      account_sid: { pattern: /^AC[0-9a-fA-F]{32}$/, expected: 'AC followed by 32 hexadecimal digits' },
      auth_token: { pattern: /^[0-9a-fA-F]{32}$/, expected: '32 hexadecimal digits' },
      phone_number: { pattern: /^\+[1-9]\d{6,14}$/, expected: 'an E.164 number such as +14155550100' },
    },
  },
} as const satisfies Record<string, ProviderDefinition>;

export type ProviderName = keyof typeof PROVIDERS;
export const PROVIDER_NAMES = Object.keys(PROVIDERS) as ProviderName[];

export function providerDefinition(provider: string): ProviderDefinition | undefined {
  return Object.hasOwn(PROVIDERS, provider) ? (PROVIDERS as Record<string, ProviderDefinition>)[provider] : undefined;
}
