import { Cron } from 'croner';
import { z } from 'zod';

/**
 * A workspace's own settings in the distributed mode, kept with its docs connection
 * (src/store/docs-connections.ts): what DIGEST_CHANNEL, DIGEST_CRON, DIGEST_TIMEZONE,
 * ALLOWED_CHANNELS, ALLOWED_USERS, ADMIN_USERS and DOCS_BASE_URL say for the whole deployment
 * in the single-workspace mode. A setting left out means the deployment's value. The admins
 * (besides whoever installed Docs Agent) may connect the docs and change these settings.
 */

const isCron = (pattern: string) => {
  try {
    new Cron(pattern, { paused: true });
    return true;
  } catch {
    return false;
  }
};

const isTimeZone = (zone: string) => {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
};

/** The most ids an allowlist may hold. */
export const MAX_LISTED = 500;

const fields = {
  digestChannel: z.string().regex(/^[CG][A-Z0-9]{2,}$/, { error: 'must be a channel id (C…)' }),
  digestCron: z.string().max(100).refine(isCron, { error: 'must be a cron expression' }),
  timeZone: z.string().max(100).refine(isTimeZone, { error: 'must be an IANA time zone' }),
  allowedChannels: z
    .array(z.string().regex(/^[CGD][A-Z0-9]{2,}$/, { error: 'must be conversation ids' }))
    .max(MAX_LISTED),
  allowedUsers: z
    .array(z.string().regex(/^[UW][A-Z0-9]{2,}$/, { error: 'must be user ids' }))
    .max(MAX_LISTED),
  adminUsers: z
    .array(z.string().regex(/^[UW][A-Z0-9]{2,}$/, { error: 'must be user ids' }))
    .max(MAX_LISTED),
  docsBaseUrl: z.url({ protocol: /^https$/, error: 'must be an https URL' }).max(2000),
};

/** What a workspace admin may save: every field checked, unknown fields refused. */
export const WorkspaceSettingsSchema = z.strictObject({
  digestChannel: fields.digestChannel.optional(),
  digestCron: fields.digestCron.optional(),
  timeZone: fields.timeZone.optional(),
  allowedChannels: fields.allowedChannels.optional(),
  allowedUsers: fields.allowedUsers.optional(),
  adminUsers: fields.adminUsers.optional(),
  docsBaseUrl: fields.docsBaseUrl.optional(),
});

export type WorkspaceSettings = z.infer<typeof WorkspaceSettingsSchema>;

/**
 * What is read back: a field this build does not accept (written by another build) reads as
 * unset rather than failing the whole workspace; fields it does not know are dropped.
 */
const StoredSettings = z.object({
  digestChannel: fields.digestChannel.optional().catch(undefined),
  digestCron: fields.digestCron.optional().catch(undefined),
  timeZone: fields.timeZone.optional().catch(undefined),
  allowedChannels: fields.allowedChannels.optional().catch(undefined),
  allowedUsers: fields.allowedUsers.optional().catch(undefined),
  adminUsers: fields.adminUsers.optional().catch(undefined),
  docsBaseUrl: fields.docsBaseUrl.optional().catch(undefined),
});

/** Stored JSON → settings, without the unset fields. Unreadable JSON reads as no settings. */
export function readSettings(json: string): WorkspaceSettings {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return {};
  }
  const parsed = StoredSettings.safeParse(value);
  if (!parsed.success) return {};
  return Object.fromEntries(
    Object.entries(parsed.data).filter(([, v]) => v !== undefined),
  ) as WorkspaceSettings;
}
