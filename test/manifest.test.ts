import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import {
  MANIFEST_URL,
  parseBotEvents,
  parseBotScopes,
  readManifestScopes,
} from '../src/manifest.ts';

describe('manifest bot scopes', () => {
  it('reads oauth_config.scopes.bot from manifest.yml', async () => {
    const scopes = await readManifestScopes();
    expect(scopes).toEqual(expect.arrayContaining(['commands', 'chat:write', 'reactions:write']));
    expect(scopes.every((s) => /^[a-z_.]+(:[a-z_.]+)*$/.test(s))).toBe(true);
  });

  it('reads only the bot list, in block or flow style, comments aside', () => {
    const yaml = [
      'oauth_config:',
      '  scopes:',
      '    user:',
      '      - search:read',
      '    bot:',
      '      - commands # slash commands',
      '      - "chat:write"',
      '    # a comment',
      '    - im:history',
      'settings:',
      '  bot:',
      '    - not:this',
    ].join('\n');
    expect(parseBotScopes(yaml)).toEqual(['commands', 'chat:write', 'im:history']);
    expect(parseBotScopes('oauth_config:\n  scopes:\n    bot: [commands, "chat:write"]\n')).toEqual(
      ['commands', 'chat:write'],
    );
    expect(parseBotScopes('display_information:\n  name: x\n')).toEqual([]);
  });

  it('subscribes to the messages of every kind of conversation the bot works in, with its scope', async () => {
    const text = await readFile(MANIFEST_URL, 'utf8');
    const scopes = parseBotScopes(text);
    const events = parseBotEvents(text);
    // Channels, private channels, DMs and group DMs: a reply in a job's thread there is a
    // follow-up only if Slack sends it, and Slack sends it only with the history scope.
    expect(events).toEqual(
      expect.arrayContaining(['message.channels', 'message.groups', 'message.im', 'message.mpim']),
    );
    for (const event of events.filter((e) => e.startsWith('message.')))
      expect(scopes).toContain(`${event.slice('message.'.length)}:history`);
    expect(events).toContain('app_mention');
    expect(scopes).toContain('app_mentions:read');
  });
});
