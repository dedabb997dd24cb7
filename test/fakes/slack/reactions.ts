/** reactions.add and reactions.remove: the bot's emoji on a message, as Slack keeps them. */
import type { Messages } from './messages.ts';
import { type Caller, fail, type Handler, type Json, str } from './wire.ts';

/** The Web API methods answered here, by name, on `messages`; the caller's bot reacts. */
export function reactionHandlers(messages: Messages): [string, Handler][] {
  return [
    ['reactions.add', (a, caller) => reactionsAdd(messages, a, caller)],
    ['reactions.remove', (a, caller) => reactionsRemove(messages, a, caller)],
  ];
}

function reactionsAdd(messages: Messages, a: Json, { botUser: BOT }: Caller): Json {
  const channel = str(a.channel);
  const ts = str(a.timestamp);
  const name = str(a.name);
  if (!channel || !ts) return fail('no_item_specified');
  // Names go without colons (`eyes`, not `:eyes:`); skin tones are `name::skin-tone-N`.
  if (!name || !/^[a-z0-9_+'-]+(::skin-tone-[2-6])?$/.test(name)) return fail('invalid_name');
  const m = messages.find(channel, ts);
  if (!m) return fail('message_not_found');
  const r = m.reactions.find((x) => x.name === name);
  if (r?.users.includes(BOT)) return fail('already_reacted');
  if (r) r.users.push(BOT);
  else m.reactions.push({ name, users: [BOT] });
  return { ok: true };
}

function reactionsRemove(messages: Messages, a: Json, { botUser: BOT }: Caller): Json {
  const channel = str(a.channel);
  const ts = str(a.timestamp);
  const name = str(a.name);
  if (!channel || !ts) return fail('no_item_specified');
  if (!name) return fail('invalid_name');
  const m = messages.find(channel, ts);
  if (!m) return fail('message_not_found');
  const r = m.reactions.find((x) => x.name === name);
  if (!r?.users.includes(BOT)) return fail('no_reaction');
  r.users = r.users.filter((u) => u !== BOT);
  if (r.users.length === 0) m.reactions.splice(m.reactions.indexOf(r), 1);
  return { ok: true };
}
