import type { KnownBlock } from '@slack/types';

/**
 * What a workspace that installed Docs Agent but has no docs project connected sees
 * (distributed mode): every command, mention, DM, button and form is answered with how to
 * connect, and the Home tab says the same at more length. Pure.
 */

/** The answer to anything asked before a docs project is connected. */
export const NOT_CONNECTED_TEXT =
  'Docs Agent is installed in this workspace, but no docs project is connected yet, so it cannot do that. An admin connects a docs project from the Docs Agent Home tab (Docs Agent in the sidebar, then Home): the project id and an admin API key from the Mintlify dashboard.';

const mrkdwn = (text: string) => ({ type: 'mrkdwn' as const, text });

/** The Home tab until a docs project is connected. */
export function notConnectedHome(): { type: 'home'; blocks: KnownBlock[] } {
  return {
    type: 'home',
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: 'Docs Agent' } },
      {
        type: 'section',
        text: mrkdwn(
          'Docs Agent is installed in this workspace, but no docs project is connected yet: until one is, it starts no jobs, reads no traffic, and every command answers with how to connect.',
        ),
      },
      { type: 'divider' },
      { type: 'header', text: { type: 'plain_text', text: 'Connect a docs project' } },
      {
        type: 'section',
        text: mrkdwn(
          'A workspace admin (whoever installed Docs Agent, or an admin of this workspace) connects one here with the *project id* and an *admin API key* (`mint_…`) from the Mintlify dashboard\u2019s API keys page. The key is checked with one cheap read, stored encrypted, and never shown again: it can only be replaced or disconnected.',
        ),
      },
      {
        type: 'context',
        elements: [
          mrkdwn(
            'The *Connect* button is not served by this version of Docs Agent yet: whoever runs it can tell you when it is.',
          ),
        ],
      },
    ],
  };
}
