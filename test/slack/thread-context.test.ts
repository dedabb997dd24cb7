import { describe, expect, it } from 'vitest';
import {
  boundContext,
  CONTEXT_MAX_CHARS,
  CONTEXT_MAX_MESSAGES,
} from '../../src/slack/thread-context.ts';

const msg = (
  ts: number,
  text: string,
  o: { user?: string; bot_id?: string; subtype?: string } = {},
) => ({
  ts: `${ts}.000100`,
  text,
  ...o,
});

describe('boundContext', () => {
  it('keeps the newest messages before the mention, oldest first, named by author', () => {
    const messages = Array.from({ length: 30 }, (_, i) => msg(i + 1, `m${i + 1}`, { user: 'U1' }));
    const c = boundContext(messages, { beforeTs: '26.000000' });
    expect(c?.messages).toBe(CONTEXT_MAX_MESSAGES);
    const lines = c?.text.split('\n') ?? [];
    expect(lines[0]).toBe('<@U1>: m6');
    expect(lines.at(-1)).toBe('<@U1>: m25');
  });

  it('leaves out the bot, joins and empty messages, and decodes Slack text', () => {
    const c = boundContext(
      [
        msg(1, 'ours', { user: 'UBOT', bot_id: 'BBOT' }),
        msg(2, 'also ours', { bot_id: 'BBOT', subtype: 'bot_message' }),
        msg(3, '<@U2> has joined', { user: 'U2', subtype: 'channel_join' }),
        msg(4, '  ', { user: 'U2' }),
        msg(5, 'a &lt;b&gt; &amp; <https://x.example|x>', { user: 'U2' }),
        msg(6, 'alert fired', { bot_id: 'BOTHER', subtype: 'bot_message' }),
      ],
      { beforeTs: '9', botUserId: 'UBOT', botId: 'BBOT' },
    );
    expect(c).toEqual({
      text: '<@U2>: a <b> & x (https://x.example)\nBOTHER: alert fired',
      messages: 2,
    });
  });

  it('stays within the character bound, cutting a single huge newest message', () => {
    const big = 'y'.repeat(CONTEXT_MAX_CHARS * 2);
    const only = boundContext([msg(1, 'old', { user: 'U1' }), msg(2, big, { user: 'U2' })], {
      beforeTs: '3',
    });
    expect(only?.messages).toBe(1);
    expect(only?.text.length).toBe(CONTEXT_MAX_CHARS);
    const many = boundContext(
      Array.from({ length: 20 }, (_, i) => msg(i + 1, 'z'.repeat(1_000), { user: 'U1' })),
      { beforeTs: '99' },
    );
    expect(many?.text.length).toBeLessThanOrEqual(CONTEXT_MAX_CHARS);
    expect(many?.messages).toBe(7);
  });

  it('is nothing when no earlier message is worth sending', () => {
    expect(boundContext([msg(5, 'later', { user: 'U1' })], { beforeTs: '5' })).toBeUndefined();
  });
});
