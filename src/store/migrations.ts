import type { CreateTableBuilder, Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { Engine } from './engine.ts';
import { budgetTakeMigration } from './migration-budget-take.ts';
import { textVectorsMigration } from './migration-text-vectors.ts';
import {
  teamPollsMigration,
  visitorPointsScopeMigration,
  workspaceScopeMigration,
} from './migration-workspace-scope.ts';
import { workspaceWiringMigration } from './migration-workspace-wiring.ts';
import { workspacesMigration } from './migration-workspaces.ts';

/**
 * One migration. Every release's migrations are additive (expand): new tables, new nullable
 * columns, new indexes, so that the build before it still runs on the migrated schema. A step
 * that takes away what an older build needs (contract: a dropped or renamed column, a new
 * NOT NULL without default) is `breaking`, with a few words on what it removes; it ships only
 * once every replica runs a build that no longer needs the old shape, and an older build
 * refuses to start on a database it has migrated (docs/operating.md, "Rolling deploys and rollbacks").
 */
export interface Step extends Migration {
  breaking?: string;
}

/**
 * Schema migrations, applied at start (src/store/migrate.ts). Written with Kysely's schema
 * builder so that the same list serves every engine; append new ones, never edit a shipped one. (Making 0001 and
 * 0002 engine-aware for PostgreSQL left the SQL they run on SQLite exactly as shipped.)
 */
export function migrations(kind: Engine['kind']): Record<string, Step> {
  /** An id the database assigns: SQLite's rowid alias, PostgreSQL's serial. */
  const withId = <T extends string>(t: CreateTableBuilder<T, never>) =>
    kind === 'postgres'
      ? t.addColumn('id', 'serial', (c) => c.primaryKey())
      : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
  return {
    '0001_core': {
      async up(db: Kysely<unknown>) {
        await withId(db.schema.createTable('job_threads'))
          .addColumn('team_id', 'text', (c) => c.notNull())
          .addColumn('channel_id', 'text', (c) => c.notNull())
          .addColumn('thread_ts', 'text', (c) => c.notNull())
          .addColumn('user_id', 'text', (c) => c.notNull())
          .addColumn('prompt', 'text', (c) => c.notNull())
          .addColumn('job_id', 'text', (c) => c.unique())
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('model', 'text')
          .addColumn('repository', 'text')
          .addColumn('ref', 'text')
          .addColumn('pr_link', 'text')
          .addColumn('error', 'text')
          .addColumn('round', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('root_version', 'integer', (c) => c.notNull().defaultTo(1))
          .addColumn('root_shown_version', 'integer', (c) => c.notNull().defaultTo(1))
          .addColumn('next_poll_at', 'bigint')
          .addColumn('poll_interval_ms', 'integer', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .addUniqueConstraint('job_threads_thread', ['team_id', 'channel_id', 'thread_ts'])
          .execute();
        await db.schema
          .createIndex('job_threads_next_poll')
          .on('job_threads')
          .column('next_poll_at')
          .execute();

        await withId(db.schema.createTable('outbox'))
          .addColumn('thread_id', 'integer', (c) => c.notNull().references('job_threads.id'))
          .addColumn('dedupe_key', 'text', (c) => c.notNull().unique())
          .addColumn('kind', 'text', (c) => c.notNull())
          .addColumn('pr_link', 'text')
          .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
          .addColumn('sent_at', 'bigint')
          .addColumn('last_error', 'text')
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex('outbox_pending')
          .on('outbox')
          .columns(['sent_at', 'next_attempt_at'])
          .execute();

        await db.schema
          .createTable('slack_events')
          .addColumn('key', 'text', (c) => c.primaryKey())
          .addColumn('received_at', 'bigint', (c) => c.notNull())
          .execute();

        await withId(db.schema.createTable('budget_uses'))
          .addColumn('bucket', 'text', (c) => c.notNull())
          .addColumn('used_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex('budget_uses_window')
          .on('budget_uses')
          .columns(['bucket', 'used_at'])
          .execute();
      },
    },
    '0002_reports': {
      async up(db: Kysely<unknown>) {
        // Counts of closed days never change, so they are fetched once and kept.
        await db.schema
          .createTable('visitor_points')
          .addColumn('range_key', 'text', (c) => c.primaryKey())
          .addColumn('human', 'integer', (c) => c.notNull())
          .addColumn('ai', 'integer', (c) => c.notNull())
          .addColumn('total', 'integer', (c) => c.notNull())
          .addColumn('fetched_at', 'bigint', (c) => c.notNull())
          .execute();
        // One row per (channel, period): the claim that makes a digest post at most once.
        await db.schema
          .createTable('digest_runs')
          .addColumn('channel_id', 'text', (c) => c.notNull())
          .addColumn('period_key', 'text', (c) => c.notNull())
          .addColumn('owner', 'text', (c) => c.notNull())
          .addColumn('claimed_at', 'bigint', (c) => c.notNull())
          .addColumn('posted_at', 'bigint')
          .addPrimaryKeyConstraint('digest_runs_pk', ['channel_id', 'period_key'])
          .execute();
      },
    },
    '0003_follow_up_at': {
      async up(db: Kysely<unknown>) {
        await db.schema.alterTable('job_threads').addColumn('follow_up_at', 'bigint').execute();
      },
    },
    '0004_replicas': {
      async up(db: Kysely<unknown>) {
        // Leases: which replica polls a job, or brings its root message up to date, and until
        // when; past that time another replica may take the work over.
        for (const column of ['locked_by', 'root_locked_by'])
          await db.schema.alterTable('job_threads').addColumn(column, 'text').execute();
        for (const column of ['locked_until', 'root_locked_until'])
          await db.schema.alterTable('job_threads').addColumn(column, 'bigint').execute();
        // A digest build beats while it runs, so a slow one is not taken over while alive.
        await db.schema.alterTable('digest_runs').addColumn('heartbeat_at', 'bigint').execute();
      },
    },
    '0005_crash_safety': {
      async up(db: Kysely<unknown>) {
        // The words of a notice (a reply that may not have reached the agent, a job that
        // cannot be checked on), kept with the outbox row that announces it.
        await db.schema.alterTable('outbox').addColumn('detail', 'text').execute();
        // Since when polls of a job keep failing in a way that will not fix itself.
        await db.schema
          .alterTable('job_threads')
          .addColumn('poll_failing_since', 'bigint')
          .execute();
        // A thread reply is recorded before it is sent to the agent, and its outcome after,
        // so that a crash in between is found and told, never lost.
        await withId(db.schema.createTable('follow_ups'))
          .addColumn('thread_id', 'integer', (c) => c.notNull().references('job_threads.id'))
          .addColumn('reply_key', 'text', (c) => c.notNull().unique())
          .addColumn('reply_ts', 'text', (c) => c.notNull())
          .addColumn('user_id', 'text', (c) => c.notNull())
          .addColumn('text', 'text', (c) => c.notNull())
          .addColumn('state', 'text', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex('follow_ups_state')
          .on('follow_ups')
          .columns(['state', 'updated_at'])
          .execute();
      },
    },
    '0006_poll_pool': {
      async up(db: Kysely<unknown>) {
        // When the job last moved (attached, followed up, a new status or PR link): it is
        // polled at the first delay for a while after that.
        await db.schema.alterTable('job_threads').addColumn('changed_at', 'bigint').execute();
        // The poller's sleep asks when the soonest poll lease ends; few rows hold one.
        await db.schema
          .createIndex('job_threads_poll_lease')
          .on('job_threads')
          .column('locked_until')
          .execute();
      },
    },
    '0007_channel_projects': {
      async up(db: Kysely<unknown>) {
        // The docs project a job belongs to (null: made before projects were kept, so the
        // configured one).
        await db.schema.alterTable('job_threads').addColumn('project_id', 'text').execute();
        // `/agent project <id>`: a channel's jobs, budget and reports use that project.
        await db.schema
          .createTable('channel_projects')
          .addColumn('team_id', 'text', (c) => c.notNull())
          .addColumn('channel_id', 'text', (c) => c.notNull())
          .addColumn('project_id', 'text', (c) => c.notNull())
          .addColumn('set_by', 'text', (c) => c.notNull())
          .addColumn('set_at', 'bigint', (c) => c.notNull())
          .addPrimaryKeyConstraint('channel_projects_pk', ['team_id', 'channel_id'])
          .execute();
      },
    },
    '0008_buttons': {
      async up(db: Kysely<unknown>) {
        // Whether a start that failed may be retried from its root's button: 'safe' (the
        // create provably did not take effect), 'confirm' (it may have: ask first), or null.
        // Who stopped the watching of a job (its requester), and which status reaction the
        // root message carries now (so the next change removes exactly that one).
        for (const column of ['start_retry', 'unwatched_by', 'root_reaction'])
          await db.schema.alterTable('job_threads').addColumn(column, 'text').execute();
      },
    },
    '0009_home': {
      async up(db: Kysely<unknown>) {
        // The last traffic report's headline figures, which the App Home shows.
        await db.schema
          .createTable('report_headlines')
          .addColumn('key', 'text', (c) => c.primaryKey())
          .addColumn('body', 'text', (c) => c.notNull())
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .execute();
        // A person's recent jobs, newest first.
        await db.schema
          .createIndex('job_threads_user')
          .on('job_threads')
          .columns(['team_id', 'user_id', 'created_at'])
          .execute();
      },
    },
    '0010_roots_in_threads': {
      async up(db: Kysely<unknown>) {
        // A job started by a mention posts its root as a reply in the mention's thread: the
        // thread (thread_ts) and the root message (root_ts) differ then. Null: the root is
        // the thread's parent, as for /agent.
        await db.schema.alterTable('job_threads').addColumn('root_ts', 'text').execute();
        // How many earlier thread messages went to the agent with the prompt (the root says so).
        await db.schema
          .alterTable('job_threads')
          .addColumn('context_messages', 'integer')
          .execute();
      },
    },
    '0011_origins': {
      async up(db: Kysely<unknown>) {
        // Where a job was asked for when it was not typed (an insight's "Draft it"): a link
        // to that message and what it was, which the root shows for the job's whole life.
        for (const column of ['origin_url', 'origin_label'])
          await db.schema.alterTable('job_threads').addColumn(column, 'text').execute();
      },
    },
    '0012_report_cache': {
      async up(db: Kysely<unknown>) {
        // Reports of settled periods, kept so that no replica spends the analytics budget on
        // them again until they expire; bodies are opaque to the store.
        await db.schema
          .createTable('report_cache')
          .addColumn('key', 'text', (c) => c.primaryKey())
          .addColumn('body', 'text', (c) => c.notNull())
          .addColumn('expires_at', 'bigint', (c) => c.notNull())
          .execute();
      },
    },
    '0013_pending_commands': {
      async up(db: Kysely<unknown>) {
        // An acked `/agent` waiting for its start, recorded right after the ack: held by
        // the process that queued it (owner, renewed lease), taken when its start begins,
        // found by a recovery pass once its process is gone.
        await withId(db.schema.createTable('pending_commands'))
          .addColumn('team_id', 'text', (c) => c.notNull())
          .addColumn('channel_id', 'text', (c) => c.notNull())
          .addColumn('user_id', 'text', (c) => c.notNull())
          .addColumn('text', 'text', (c) => c.notNull())
          .addColumn('response_url', 'text', (c) => c.notNull())
          .addColumn('conversation', 'text')
          .addColumn('received_at', 'bigint', (c) => c.notNull())
          .addColumn('owner', 'text', (c) => c.notNull())
          .addColumn('lease_until', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex('pending_commands_lease')
          .on('pending_commands')
          .column('lease_until')
          .execute();
      },
    },
    '0014_command_threads': {
      async up(db: Kysely<unknown>) {
        // The slash command a thread was started for (its response_url, unique to one typed
        // command): at most one thread per command, however many processes try to start it
        // (a record whose insert timed out but committed, a takeover racing the original).
        await db.schema.alterTable('job_threads').addColumn('command_url', 'text').execute();
        await db.schema
          .createIndex('job_threads_command')
          .unique()
          .on('job_threads')
          .column('command_url')
          .execute();
        await db.schema
          .createIndex('pending_commands_url')
          .on('pending_commands')
          .column('response_url')
          .execute();
      },
    },
    '0015_insight_gaps': {
      async up(db: Kysely<unknown>) {
        // A content gap of the insights reports, one row per need and project, kept across
        // reports and weeks (src/insights/gap-book.ts): the word sets it was listed under,
        // its latest evidence, and its state (open, drafted by a person, dismissed by one).
        await withId(db.schema.createTable('insight_gaps'))
          .addColumn('project_id', 'text', (c) => c.notNull())
          .addColumn('gap_key', 'text', (c) => c.notNull())
          .addColumn('kind', 'text', (c) => c.notNull())
          .addColumn('signatures', 'text', (c) => c.notNull())
          .addColumn('title', 'text', (c) => c.notNull())
          .addColumn('evidence', 'text')
          .addColumn('evidence_to', 'text')
          .addColumn('state', 'text', (c) => c.notNull())
          .addColumn('claim_token', 'text')
          .addColumn('claimed_by', 'text')
          .addColumn('claimed_at', 'bigint')
          .addColumn('before', 'text')
          .addColumn('pr_at', 'bigint')
          .addColumn('dismissed_by', 'text')
          .addColumn('dismissed_at', 'bigint')
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
          .addUniqueConstraint('insight_gaps_key', ['project_id', 'gap_key'])
          .execute();
        await db.schema
          .createIndex('insight_gaps_seen')
          .on('insight_gaps')
          .columns(['project_id', 'last_seen_at'])
          .execute();
        // The gap a job was drafted from (its "Draft it"): the gap's job is its latest thread.
        await db.schema.alterTable('job_threads').addColumn('gap_id', 'integer').execute();
        await db.schema.createIndex('job_threads_gap').on('job_threads').column('gap_id').execute();
      },
    },
    '0016_text_vectors': textVectorsMigration,
    // Its tables are long enough for a file of their own.
    '0017_workspaces': workspacesMigration,
    '0018_workspace_wiring': workspaceWiringMigration,
    '0019_workspace_scope': workspaceScopeMigration,
    '0020_visitor_points_scope': visitorPointsScopeMigration,
    '0021_team_polls': teamPollsMigration,
    '0022_budget_take': budgetTakeMigration(kind),
  };
}
