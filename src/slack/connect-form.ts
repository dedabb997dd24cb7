import { z } from 'zod';
import { PROJECT_ID } from '../config/config.ts';
import type { WorkspaceSettings } from '../workspace-settings.ts';
import type { ConnectOutcome } from '../workspaces/docs-admin.ts';
import {
  CONNECT_BLOCKS,
  type FormWorkspace,
  INPUT_ACTION,
  SETTINGS_BLOCKS,
} from './connect-modals.ts';

/**
 * The two forms' submissions (view_submission), read with zod: each field's error is said
 * under its field (`response_action: 'errors'`, by block id), in words that never repeat
 * what was typed. Pure.
 */

/** Errors by block id, as Slack's `response_action: 'errors'` takes them. */
export type FieldErrors = Record<string, string>;
export type Read<T> = { ok: true; value: T } | { ok: false; errors: FieldErrors };

/** One input's state as Slack sends it; only the field its element has is set. */
const InputState = z.looseObject({
  value: z.string().nullish(),
  selected_conversation: z.string().nullish(),
  selected_conversations: z.array(z.string()).nullish(),
  selected_users: z.array(z.string()).nullish(),
});
const StateValues = z.record(z.string(), z.record(z.string(), InputState));
type Inputs = z.infer<typeof StateValues>;

const Metadata = z.strictObject({
  teamId: z.string().min(1).nullable(),
  enterpriseId: z.string().min(1).nullable(),
});

/** The workspace a form was opened for; undefined when its metadata is not one of ours. */
export function readFormWorkspace(metadata: unknown): FormWorkspace | undefined {
  if (typeof metadata !== 'string') return undefined;
  try {
    const parsed = Metadata.safeParse(JSON.parse(metadata));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function inputsOf(values: unknown): Inputs {
  return StateValues.safeParse(values).data ?? {};
}

const field = (inputs: Inputs, block: string) => inputs[block]?.[INPUT_ACTION];
const typed = (inputs: Inputs, block: string) => field(inputs, block)?.value?.trim() ?? '';

const ADMIN_KEY = /^mint_[A-Za-z0-9_-]{8,250}$/;

const ConnectForm = z.object({
  [CONNECT_BLOCKS.projectId]: z.string().regex(PROJECT_ID, {
    error:
      'Not a project id: letters, digits, - and _ (up to 100), as the dashboard\u2019s API keys page shows it.',
  }),
  [CONNECT_BLOCKS.apiKey]: z
    .string()
    .refine((k) => !k.startsWith('mint_dsc_'), {
      error:
        'That is an assistant API key (mint_dsc_…), a public token that cannot start agent jobs: use an admin API key (mint_…).',
    })
    .refine((k) => ADMIN_KEY.test(k), {
      error:
        'Not an admin API key: it starts with mint_, followed by letters and digits, as the dashboard shows it once.',
    }),
});

/** The connect form: a project id and an admin API key, each of their shape. */
export function readConnectForm(values: unknown): Read<{ projectId: string; apiKey: string }> {
  const inputs = inputsOf(values);
  const raw = {
    [CONNECT_BLOCKS.projectId]: typed(inputs, CONNECT_BLOCKS.projectId),
    [CONNECT_BLOCKS.apiKey]: typed(inputs, CONNECT_BLOCKS.apiKey),
  };
  const parsed = ConnectForm.safeParse(raw);
  if (!parsed.success) return { ok: false, errors: errorsOf(parsed.error) };
  return {
    ok: true,
    value: {
      projectId: parsed.data[CONNECT_BLOCKS.projectId],
      apiKey: parsed.data[CONNECT_BLOCKS.apiKey],
    },
  };
}

/**
 * Why the key was not saved, under the field to fix: the key (refused, or not for this
 * project), the project id (not found), or, when the API could not answer, the key's field
 * with "try again". The key itself is never repeated; the project id is the person's own.
 */
export function checkErrors(
  outcome: Extract<ConnectOutcome, { ok: false }>,
  projectId: string,
): FieldErrors {
  const key = CONNECT_BLOCKS.apiKey;
  switch (outcome.problem) {
    case 'key_refused':
      return {
        [key]:
          'The Mintlify API refused this key (401): it is wrong, revoked or expired. Copy an admin API key from the dashboard\u2019s API keys page. Nothing was saved.',
      };
    case 'key_forbidden':
      return {
        [key]: `This key may not read project ${projectId} (403): it is another organisation\u2019s or another project\u2019s, or this server is not on its IP allowlist. Nothing was saved.`,
      };
    case 'project_not_found':
      return {
        [CONNECT_BLOCKS.projectId]: `The Mintlify API knows no project ${projectId} for this key (404): check the project id on the dashboard\u2019s API keys page. Nothing was saved.`,
      };
    case 'rate_limited':
      return {
        [key]: `The key could not be checked: the Mintlify API asked us to wait${outcome.retryAfterS ? ` ${outcome.retryAfterS} s` : ''}. Nothing was saved; try again then.`,
      };
    default:
      return {
        [key]: `The key could not be checked (${outcome.detail.replace(/^The /, 'the ')}). Nothing was saved; try again in a minute.`,
      };
  }
}

/** What each setting must be, said under its field. */
export const SETTING_ERRORS: Record<keyof WorkspaceSettings, string> = {
  digestChannel: 'Choose a channel (a public or private channel, not a DM).',
  digestCron:
    'Not a cron expression: five fields, minute hour day month weekday, such as 0 9 * * 1 (Mondays at 09:00).',
  timeZone: 'Not an IANA time zone name, such as Europe/Berlin or America/New_York.',
  allowedChannels: 'Choose channels or conversations (at most 500).',
  allowedUsers: 'Choose people (at most 500).',
  adminUsers: 'Choose people (at most 500).',
  docsBaseUrl: 'Not an https address, such as https://docs.example.com.',
};

/**
 * The settings form as typed and chosen: empty fields are left out (unset: the deployment's
 * value applies). Not checked here: the vault's schema checks every field on save and names
 * the ones it refuses (SettingsInvalid), which `settingErrors` puts under their fields.
 */
export function readSettingsForm(values: unknown): WorkspaceSettings {
  const inputs = inputsOf(values);
  const B = SETTINGS_BLOCKS;
  const many = (block: string, key: 'selected_conversations' | 'selected_users') => {
    const ids = field(inputs, block)?.[key] ?? [];
    return ids.length > 0 ? ids : undefined;
  };
  const one = (s: string) => (s === '' ? undefined : s);
  const raw: Record<keyof WorkspaceSettings, string | string[] | undefined> = {
    // At most one chosen, none to clear it; a form opened before the select became a
    // multi-select of one still sends its single choice.
    digestChannel:
      field(inputs, B.digestChannel)?.selected_conversations?.[0] ??
      field(inputs, B.digestChannel)?.selected_conversation ??
      undefined,
    digestCron: one(typed(inputs, B.digestCron).replace(/\s+/g, ' ')),
    timeZone: one(typed(inputs, B.timeZone)),
    allowedChannels: many(B.allowedChannels, 'selected_conversations'),
    allowedUsers: many(B.allowedUsers, 'selected_users'),
    adminUsers: many(B.adminUsers, 'selected_users'),
    docsBaseUrl: one(typed(inputs, B.docsBaseUrl).replace(/\/+$/, '')),
  };
  return Object.fromEntries(
    Object.entries(raw).filter(([, v]) => v !== undefined),
  ) as WorkspaceSettings;
}

/** The settings' field names (SettingsInvalid's, or zod's) as errors under their fields. */
export function settingErrors(fields: readonly string[]): FieldErrors {
  const errors: FieldErrors = {};
  for (const f of fields) {
    const name = f as keyof WorkspaceSettings;
    const block = SETTINGS_BLOCKS[name];
    if (block) errors[block] = SETTING_ERRORS[name];
  }
  // A field this form does not show: said under the first one rather than lost.
  if (Object.keys(errors).length === 0 && fields.length > 0)
    errors[SETTINGS_BLOCKS.adminUsers] = 'These settings could not be saved; nothing was changed.';
  return errors;
}

function errorsOf(error: z.ZodError): FieldErrors {
  const errors: FieldErrors = {};
  for (const issue of error.issues) {
    const block = String(issue.path[0] ?? '');
    errors[block] ??= issue.message;
  }
  return errors;
}
