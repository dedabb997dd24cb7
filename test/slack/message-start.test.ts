import { describe, expect, it } from 'vitest';
import { messageKey, promptOf } from '../../src/slack/listeners/message-start.ts';

describe('promptOf', () => {
  it("drops the bot's own mention, keeps other mentions, line breaks and typed text", () => {
    expect(promptOf('<@UBOT> add a quickstart', 'UBOT')).toBe('add a quickstart');
    expect(promptOf('hey <@UBOT|docsbot>  add\nsteps &amp; &lt;code&gt;', 'UBOT')).toBe(
      'hey add\nsteps & <code>',
    );
    expect(promptOf('<@UBOT> ask <@U0002> first', 'UBOT')).toBe('ask @U0002 first');
    expect(promptOf('<@UBOT>', 'UBOT')).toBe('');
  });

  it('leaves the text alone while the bot user is unknown', () => {
    expect(promptOf('<@UBOT> hi', undefined)).toBe('@UBOT hi');
  });

  it('keys a message by channel and ts, whichever event brought it', () => {
    expect(messageKey('C1', '1.2')).toBe('msg:C1:1.2');
  });
});
