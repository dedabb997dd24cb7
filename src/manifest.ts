import { readFile } from 'node:fs/promises';

/**
 * The Slack app manifest (manifest.yml at the repository root, copied into the Docker image)
 * is the one list of the bot scopes the app needs; the doctor compares the token's granted
 * scopes against it rather than keeping a second list in code.
 */

export const MANIFEST_URL = new URL('../manifest.yml', import.meta.url);

/**
 * `oauth_config.scopes.bot` of a manifest, read without a YAML library: the manifest keeps
 * that list in block style (`- scope` lines under `bot:`), which is all this reads.
 */
export function parseBotScopes(text: string): string[] {
  return parseList(text, ['oauth_config', 'scopes', 'bot']);
}

/** `settings.event_subscriptions.bot_events`: the events Slack sends the bot. */
export function parseBotEvents(text: string): string[] {
  return parseList(text, ['settings', 'event_subscriptions', 'bot_events']);
}

/** A list of plain strings at `path`, in block (`- item`) or flow (`[a, b]`) style. */
function parseList(text: string, path: string[]): string[] {
  const stack: { key: string; indent: number }[] = [];
  const scopes: string[] = [];
  let listIndent: number | undefined;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/\s+#.*$/, '');
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
    const indent = line.length - line.trimStart().length;
    const item = /^\s*-\s+["']?([^"'\s]+)["']?\s*$/.exec(line);
    if (listIndent !== undefined) {
      if (item && indent >= listIndent) {
        scopes.push(item[1] ?? '');
        continue;
      }
      if (indent <= listIndent) break;
    }
    const key = /^\s*([A-Za-z_][\w-]*):\s*(.*)$/.exec(line);
    if (!key) continue;
    while (stack.length > 0 && (stack.at(-1)?.indent ?? 0) >= indent) stack.pop();
    stack.push({ key: key[1] ?? '', indent });
    const here = stack.map((s) => s.key).join('.');
    if (here === path.join('.')) {
      const inline = /^\[(.*)\]$/.exec((key[2] ?? '').trim());
      if (inline)
        return (inline[1] ?? '')
          .split(',')
          .map((s) => s.trim().replace(/^["']|["']$/g, ''))
          .filter(Boolean);
      listIndent = indent;
    }
  }
  return scopes;
}

/** The bot scopes manifest.yml asks for; throws when it is missing or lists none. */
export async function readManifestScopes(url: URL = MANIFEST_URL): Promise<string[]> {
  const scopes = parseBotScopes(await readFile(url, 'utf8'));
  if (scopes.length === 0) throw new Error('manifest.yml lists no oauth_config.scopes.bot');
  return scopes;
}
