import { expect, it } from 'vitest';
import { notInChannelText } from '../src/invite-hint.ts';

it('names the bot to invite by its name, or by a mention of its user in an install, and never in a DM', () => {
  expect(
    notInChannelText('start a job', 'channel', { name: 'docs_agent', userId: 'U1' }),
  ).toContain('Invite me with `/invite @docs_agent`');
  // Distributed mode: the install's bot user, which Slack shows with its name.
  expect(notInChannelText('start a job', 'channel', { userId: 'U0ABOT' })).toContain(
    'Invite me (<@U0ABOT>) to this channel with `/invite`',
  );
  expect(notInChannelText('start a job', 'channel', undefined)).toContain('`/invite` and my name');
  expect(notInChannelText('start a job', 'im', { userId: 'U0ABOT' })).not.toContain('invite');
});
