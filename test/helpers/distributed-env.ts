import type { FakeSlack } from '../fakes/slack.ts';
import { SLACK_APP } from '../fakes/slack.ts';

/**
 * The environment of a distributed bot on the fake Slack: the fake app's OAuth credentials,
 * a state secret and an encryption key; and the fake app's Redirect URL set to the bot's own
 * callback, as the Slack side of the setup says.
 */

export interface DistributedOptions {
  /** The app has token rotation on (the fake issues expiring tokens) and SLACK_TOKEN_ROTATION says so. */
  tokenRotation?: boolean;
  /** ENCRYPTION_KEYS (one test key by default). */
  encryptionKeys?: string;
}

export const STATE_SECRET = 'test-state-secret-0123456789abcdef0123456789';
/** `k1`, 32 bytes of 1s: the default ENCRYPTION_KEYS of a distributed harness. */
export const TEST_KEYS = `k1:${Buffer.alloc(32, 1).toString('base64')}`;

export function distributedEnv(
  slack: FakeSlack,
  port: string,
  o: DistributedOptions,
): Record<string, string> {
  slack.configureApp({
    redirectUrls: [`http://127.0.0.1:${port}/slack/oauth_redirect`],
    tokenRotation: o.tokenRotation === true,
  });
  return {
    SLACK_CLIENT_ID: SLACK_APP.clientId,
    SLACK_CLIENT_SECRET: SLACK_APP.clientSecret,
    SLACK_STATE_SECRET: STATE_SECRET,
    SLACK_TOKEN_ROTATION: String(o.tokenRotation === true),
    ENCRYPTION_KEYS: o.encryptionKeys ?? TEST_KEYS,
  };
}
