/**
 * The harness's defaults (test/helpers/harness.ts re-exports them): the secrets of the bot's
 * environment, and the project, channel and person a request comes from unless a test says.
 */
export const SECRETS = {
  botToken: 'xoxb-test-bot-token-0000000001',
  appToken: 'xapp-1-test-app-token-000001',
  signingSecret: 'test-signing-secret-0123456789abcdef',
  apiKey: 'mint_test_admin_key_0123456789',
} as const;
export const PROJECT = 'proj_docs';
export const CHANNEL = 'C0001';
export const USER = 'U0001';
