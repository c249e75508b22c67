/**
 * The console (served at /console) is one public OAuth client for the whole deployment, stored by
 * migration ConsoleOAuthClient without an organization: a grant of it belongs to the organization
 * of the user who signed in. Its only redirect URI follows PUBLIC_BASE_URL, so it is not stored.
 */
export const CONSOLE_CLIENT_ID = 'c0501e00-0000-4000-8000-000000000001';

/** Where the consent page sends the console's authorization response. */
export function consoleRedirectUri(publicBaseUrl: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}/console/`;
}
