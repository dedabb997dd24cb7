import { describe, expect, it } from 'vitest';
import { parseBotScopes, readManifestScopes } from '../src/manifest.ts';

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
});
