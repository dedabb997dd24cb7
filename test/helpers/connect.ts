/**
 * A workspace admin at the App Home of a distributed bot, as Slack sends it: the tab opened,
 * a click on one of its buttons (a block_actions payload from a `home` view), and a modal's
 * form submitted (view_submission with each input's state, as Slack shapes it by element).
 */
import { expect } from 'vitest';
import { SLACK_APP } from '../fakes/slack.ts';
import { eventFrom, type From, homeOpened } from './distributed.ts';
import type { Harness } from './harness.ts';
import { eventually } from './net.ts';

type Json = Record<string, unknown>;

/** What the person typed or chose in one input, by the element's kind. */
export type Input =
  | { value: string | null }
  | { selected_conversation: string | null }
  | { selected_conversations: string[] }
  | { selected_users: string[] };

/** Views published to a person's Home so far. */
export const homesOf = (h: Harness, user: string) =>
  h.slack
    .callsTo('views.publish')
    .filter((c) => c.args.user_id === user && c.status === 200)
    .map((c) => parsed(c.args.view));

/** The next Home published to `user` after `n` of them. */
export async function nextHome(h: Harness, user: string, n: number): Promise<Json> {
  return eventually(() => homesOf(h, user)[n], `Home #${n + 1} of ${user}`, 10_000);
}

/** Waits until the last Home published to `user` is one `ok` accepts; answers it. */
export async function homeWhere(h: Harness, user: string, ok: (view: Json) => boolean) {
  return eventually(
    () => {
      const last = homesOf(h, user).at(-1);
      return last && ok(last) ? last : undefined;
    },
    `a Home of ${user} as expected`,
    10_000,
  );
}

/** The person opens the Home tab; answers the Home they see. */
export async function openHome(h: Harness, from: From): Promise<Json> {
  const n = homesOf(h, from.user).length;
  const res = await eventFrom(h, from, homeOpened(from.user));
  expect(res.status).toBe(200);
  return nextHome(h, from.user, n);
}

/** The buttons of a view's actions blocks, by action id. */
export function buttonsOf(view: Json): Map<string, Json> {
  const found = new Map<string, Json>();
  for (const b of (view.blocks as Json[]) ?? []) {
    const elements = b.type === 'actions' ? (b.elements as Json[]) : [];
    const accessory = b.accessory as Json | undefined;
    for (const e of accessory?.type === 'button' ? [...elements, accessory] : elements)
      found.set(String(e.action_id), { ...e, block_id: b.block_id });
  }
  return found;
}

/** A click on a Home button, as Slack sends it; `claim` forges the team the view says. */
export function homeClick(h: Harness, from: From, actionId: string, o: { viewTeam?: string } = {}) {
  const payload = {
    type: 'block_actions',
    user: { id: from.user, username: 'someone', name: 'someone', team_id: from.team },
    api_app_id: SLACK_APP.appId,
    token: 'legacy-verification-token',
    container: { type: 'view', view_id: `V${from.user}` },
    trigger_id: h.slack.issueTriggerId(from.user),
    team: {
      id: from.team,
      domain: 'ws',
      ...(from.enterprise ? { enterprise_id: from.enterprise } : {}),
    },
    enterprise: from.enterprise ? { id: from.enterprise, name: 'Org' } : null,
    is_enterprise_install: from.orgWide === true,
    view: {
      id: `V${from.user}`,
      team_id: o.viewTeam ?? from.team,
      type: 'home',
      private_metadata: '',
      callback_id: '',
      state: { values: {} },
      app_id: SLACK_APP.appId,
    },
    actions: [
      {
        action_id: actionId,
        block_id: 'docs_admin',
        type: 'button',
        text: { type: 'plain_text', text: actionId },
        action_ts: `${(Date.now() / 1000).toFixed(6)}`,
      },
    ],
  };
  return h.interact(payload);
}

/** The last modal opened for a person (views.open), as Slack stored it. */
export function lastModal(h: Harness, user: string): Json | undefined {
  return h.slack.views.filter((v) => v.user === user).at(-1)?.view as Json | undefined;
}

/** A click that opens a modal: answers it. */
export async function openModal(h: Harness, from: From, actionId: string): Promise<Json> {
  const n = h.slack.views.length;
  expect((await homeClick(h, from, actionId)).status).toBe(200);
  await eventually(() => h.slack.views.length > n, `a modal from ${actionId}`);
  return lastModal(h, from.user) as Json;
}

/** A modal's form submitted by `from` with these inputs (by block id); answers the ack. */
export function submit(
  h: Harness,
  from: From,
  view: Json,
  inputs: Record<string, Input>,
  o: { metadata?: string; viewTeam?: string } = {},
) {
  const values = Object.fromEntries(
    Object.entries(inputs).map(([block, input]) => [
      block,
      { value: { type: typeOf(input), ...input } },
    ]),
  );
  const payload = {
    type: 'view_submission',
    team: {
      id: from.team,
      domain: 'ws',
      ...(from.enterprise ? { enterprise_id: from.enterprise } : {}),
    },
    user: { id: from.user, username: 'someone', name: 'someone', team_id: from.team },
    api_app_id: SLACK_APP.appId,
    token: 'legacy-verification-token',
    trigger_id: h.slack.issueTriggerId(from.user),
    view: {
      ...view,
      ...(o.metadata === undefined ? {} : { private_metadata: o.metadata }),
      ...(o.viewTeam === undefined ? {} : { team_id: o.viewTeam }),
      state: { values },
    },
    response_urls: [],
    is_enterprise_install: from.orgWide === true,
    enterprise: from.enterprise ? { id: from.enterprise, name: 'Org' } : null,
  };
  return h.interact(payload);
}

/** A person's change to one input: typed text, a chosen conversation or person, or ids. */
export type Change = string | string[] | null;

/**
 * A modal's form as a person leaves it and Slack sends it: every input holds what the modal
 * showed (its initial value) unless the person changed it (`changes`, by block id). Only what
 * Slack's menus let a person do: a single select (`conversations_select`, `users_select`)
 * cannot be emptied once it holds a value (its menu has no "none"), and a multi-select holds
 * at most its `max_selected_items`. Asking for either throws: no person could send it.
 */
export function submitAsPerson(
  h: Harness,
  from: From,
  view: Json,
  changes: Record<string, Change>,
) {
  const inputs: Record<string, Input> = {};
  for (const b of (view.blocks as Json[]) ?? []) {
    if (b.type !== 'input') continue;
    const id = String(b.block_id);
    const e = b.element as Json;
    const changed = id in changes;
    const to = changes[id];
    inputs[id] = personInput(e, changed, to, id);
  }
  const unknown = Object.keys(changes).filter((id) => !(id in inputs));
  if (unknown.length > 0) throw new Error(`no input ${unknown.join(', ')} in this form`);
  return submit(h, from, view, inputs);
}

function personInput(e: Json, changed: boolean, to: Change | undefined, id: string): Input {
  const many = (initial: unknown): string[] => {
    const ids = changed ? ((to as string[] | null) ?? []) : ((initial as string[]) ?? []);
    const max = typeof e.max_selected_items === 'number' ? e.max_selected_items : Infinity;
    if (ids.length > max) throw new Error(`${id} holds at most ${max}`);
    return ids;
  };
  switch (e.type) {
    case 'plain_text_input':
      return { value: changed ? (to as string | null) : ((e.initial_value as string) ?? null) };
    case 'conversations_select': {
      const initial = (e.initial_conversation as string | undefined) ?? null;
      const chosen = Array.isArray(to) ? (to[0] ?? null) : (to ?? null);
      if (Array.isArray(to) && to.length > 1) throw new Error(`${id} holds one`);
      if (changed && chosen === null && initial !== null)
        throw new Error(`${id}: a conversations_select cannot be emptied once chosen`);
      return { selected_conversation: changed ? chosen : initial };
    }
    case 'multi_conversations_select':
      return { selected_conversations: many(e.initial_conversations) };
    case 'multi_users_select':
      return { selected_users: many(e.initial_users) };
    default:
      throw new Error(`${id}: no person's input for a ${String(e.type)}`);
  }
}

function typeOf(input: Input): string {
  if ('value' in input) return 'plain_text_input';
  if ('selected_conversation' in input) return 'conversations_select';
  if ('selected_conversations' in input) return 'multi_conversations_select';
  return 'multi_users_select';
}

function parsed(view: unknown): Json {
  return (typeof view === 'string' ? JSON.parse(view) : view) as Json;
}

/** Every text a block or element of a view holds, joined: what a person reads. */
export function textOf(view: Json): string {
  return JSON.stringify(view.blocks);
}
