import { createHash } from 'node:crypto';
import type { App } from '@slack/bolt';
import type { KnownBlock } from '@slack/types';
import type { WebClient } from '@slack/web-api';
import { z } from 'zod';
import type { Budget } from '../api/budget.ts';
import type { JobChat } from '../jobs/ports.ts';
import type { Logger } from '../log.ts';
import { runInBackground } from '../store/pool-gate.ts';
import { type ScopeOf, singleScope } from '../store/scope.ts';
import type { JobThread, Store, WorkspaceRef } from '../store/types.ts';
import type { WorkQueue } from '../work-queue.ts';
import { toChatError } from './chat.ts';
import { HOME_JOBS, type HomeJob, homeView, type ProjectBudget } from './home-blocks.ts';

/**
 * The App Home: published when a person opens the tab, and again when one of their jobs
 * changes, only if what they would see changed. Refreshes are coalesced per person (one
 * look however many changes pile up in `debounceMs`), at most one publish per person every
 * `gapMs`, one at a time (views.publish is Tier 4), off every ack path and never in the way
 * of the job announcements: a Home that fails is logged and left as it was. A refresh whose
 * view hashes the same as the last one published for the person is not sent (a job's root
 * is edited far more often than its line on the Home changes). A person is known by team and
 * user: an Enterprise Grid user id (W…) is the same in every team of the org, and each
 * team's Home is its own.
 */
export interface HomePublisher {
  /**
   * Publishes now, changed or not (the tab was opened). Never throws. `enterpriseId`: the
   * team's Enterprise Grid org, if any (how an org-wide install is found).
   */
  publish(teamId: string, userId: string, enterpriseId?: string): Promise<void>;
  /** Publishes soon, coalesced, if the person's view changed (one of their jobs did). */
  refresh(teamId: string, userId: string, enterpriseId?: string): void;
  stop(): void;
}

/** Distributed mode: the workspace's own part of the Home, and its docs project. */
export type WorkspaceHome = (
  teamId: string,
  userId: string,
) => Promise<{ blocks: KnownBlock[]; projectId: string | undefined }>;

/** People whose last published view is remembered; beyond that, a refresh publishes. */
const PUBLISHED_MAX = 5_000;

export function createHomePublisher(deps: {
  /** The workspace's client (SlackApp's clientFor): each Home is published with its own token. */
  clientFor: (ws: WorkspaceRef) => Promise<Pick<WebClient, 'views' | 'chat'>>;
  workspace?: WorkspaceHome | undefined;
  store: Pick<Store, 'recentThreadsOf' | 'lastReportHeadline'>;
  /** A project's agent budget (it is per project). */
  agentBudget: (projectId: string) => Pick<Budget, 'status'>;
  /** MINTLIFY_PROJECT_ID: a thread without a project of its own, and a person with no jobs. */
  defaultProjectId: string;
  log: Logger;
  /** Whose report headline a workspace's Home shows (src/store/scope.ts); the single one's by default. */
  scope?: ScopeOf;
  debounceMs?: number;
  gapMs?: number;
}): HomePublisher {
  const scopeOf = deps.scope ?? singleScope;
  const log = deps.log.child({ component: 'home' });
  const debounceMs = deps.debounceMs ?? 1_000;
  const gapMs = deps.gapMs ?? 2_000;
  const timers = new Map<string, NodeJS.Timeout>();
  const lastAt = new Map<string, number>();
  /** Permalinks never change: asked once per thread. */
  const permalinks = new Map<string, string>();
  let chain: Promise<void> = Promise.resolve();
  let stopped = false;

  async function permalink(
    client: Pick<WebClient, 'chat'>,
    t: JobThread,
  ): Promise<string | undefined> {
    const key = `${t.channelId}:${t.threadTs}`;
    const known = permalinks.get(key);
    if (known) return known;
    try {
      const r = await client.chat.getPermalink({
        channel: t.channelId,
        message_ts: t.threadTs,
      });
      if (r.permalink) permalinks.set(key, r.permalink);
      return r.permalink;
    } catch (err) {
      log.debug({ channelId: t.channelId, code: toChatError(err).code }, 'home.no_permalink');
      return undefined;
    }
  }

  /** The hash of the last view published for each person (the newest few thousand). */
  const published = new Map<string, string>();
  function remember(person: string, hash: string): void {
    published.delete(person);
    published.set(person, hash);
    if (published.size > PUBLISHED_MAX) published.delete(published.keys().next().value ?? '');
  }

  async function publishNow(ws: WorkspaceRef, userId: string, opened: boolean): Promise<void> {
    const started = performance.now();
    const person = personKey(ws, userId);
    lastAt.set(person, Date.now());
    try {
      const client = await deps.clientFor(ws);
      const [threads, report, workspace] = await Promise.all([
        deps.store.recentThreadsOf(ws.teamId, userId, HOME_JOBS),
        deps.store.lastReportHeadline(scopeOf(ws)),
        deps.workspace?.(ws.teamId, userId),
      ]);
      const [jobs, budgets] = await Promise.all([
        Promise.all(
          threads.map(
            async (thread): Promise<HomeJob> => ({
              thread,
              permalink: await permalink(client, thread),
            }),
          ),
        ),
        budgetsOf(threads, workspace?.projectId ?? deps.defaultProjectId),
      ]);
      const data = { jobs, budgets, report, workspace: workspace?.blocks };
      // Without its "Updated at" line, which changes every time.
      const hash = createHash('sha256')
        .update(JSON.stringify(homeView({ ...data, now: 0 })))
        .digest('base64url');
      if (!opened && published.get(person) === hash) {
        log.debug({ userId }, 'home.unchanged');
        return;
      }
      const view = homeView({ ...data, now: Date.now() });
      await client.views.publish({ user_id: userId, view });
      remember(person, hash);
      const durationMs = Math.round(performance.now() - started);
      log.info({ userId, jobs: jobs.length, durationMs, opened }, 'home.published');
    } catch (err) {
      const e = toChatError(err);
      published.delete(person); // what the person sees is not known: the next look publishes
      log.warn({ err: e, userId, code: e.code }, 'home.publish_failed');
      if (e.retryAfterMs !== undefined) schedule(ws, userId, e.retryAfterMs);
    }
  }

  /** The budgets of the projects the jobs use, most recent job's first. */
  function budgetsOf(threads: JobThread[], defaultProjectId: string): Promise<ProjectBudget[]> {
    const ids = new Set(threads.map((t) => t.projectId ?? defaultProjectId));
    if (ids.size === 0) ids.add(defaultProjectId);
    return Promise.all(
      [...ids].map(async (projectId) => ({
        projectId,
        ...(await deps.agentBudget(projectId).status()),
      })),
    );
  }

  /**
   * One publish at a time, in order. A refresh (a job changed) is background work: its reads
   * wait behind a person's (src/store/pool-gate.ts); a Home someone opened is not.
   */
  function enqueue(ws: WorkspaceRef, userId: string, opened: boolean): Promise<void> {
    const publish = () => publishNow(ws, userId, opened);
    chain = chain.then(() => (stopped ? undefined : opened ? publish() : runInBackground(publish)));
    return chain;
  }

  function schedule(ws: WorkspaceRef, userId: string, atLeastMs = 0): void {
    const person = personKey(ws, userId);
    if (stopped || timers.has(person)) return; // coalesced into the one already coming
    const sinceLast = Date.now() - (lastAt.get(person) ?? 0);
    const wait = Math.max(debounceMs, gapMs - sinceLast, atLeastMs);
    const timer = setTimeout(() => {
      timers.delete(person);
      void enqueue(ws, userId, false);
    }, wait);
    timer.unref();
    timers.set(person, timer);
  }

  return {
    publish: (teamId, userId, enterpriseId) => enqueue({ teamId, enterpriseId }, userId, true),
    refresh: (teamId, userId, enterpriseId) => schedule({ teamId, enterpriseId }, userId),
    stop() {
      stopped = true;
      for (const t of timers.values()) clearTimeout(t);
      timers.clear();
    },
  };
}

/** A person of a team: a Grid user (W…) has one Home in each team of the org. */
const personKey = (ws: WorkspaceRef, userId: string) => `${ws.teamId}:${userId}`;

/**
 * The jobs feature's chat, telling the Home about every root message it brings up to date:
 * the job's owner sees the change on their Home too. The Home's work is only scheduled here.
 */
export function refreshingHome(chat: JobChat, home: Pick<HomePublisher, 'refresh'>): JobChat {
  return {
    ...chat,
    async showJob(thread) {
      await chat.showJob(thread);
      home.refresh(thread.teamId, thread.userId, thread.enterpriseId);
    },
  };
}

const HomeOpened = z.object({
  user: z.string().min(1),
  tab: z.string().optional(),
});

/** `app_home_opened` (Home tab): publish from the work queue; the event is acked already. */
export function registerHome(
  app: App,
  deps: { home: HomePublisher; work: WorkQueue; log: Logger },
): void {
  const log = deps.log.child({ component: 'home' });
  app.event('app_home_opened', async ({ event, body, context }) => {
    const parsed = HomeOpened.safeParse(event);
    if (!parsed.success || parsed.data.tab !== 'home') return;
    const teamId = context.teamId ?? (body as { team_id?: string }).team_id;
    if (!teamId) return;
    const userId = parsed.data.user;
    const enterpriseId = context.enterpriseId;
    if (!deps.work.offer('home.publish', () => deps.home.publish(teamId, userId, enterpriseId)))
      log.warn({ userId }, 'home.busy');
  });
}
