import type { LabelledQuestion } from './grouping-set.ts';

/**
 * A second labelled set, written after the first figures and before the grouping was tuned,
 * on other product areas, and not used to choose a method or a threshold: figures on it
 * say how much the choices made on grouping-set.ts were fitted to that set. Since the built-in
 * synonym table grew, it is no longer untouched: each new group was kept only if it helped A
 * and B taken together. Set C (grouping-holdout-c.ts) is the untouched one now.
 *
 * Intents that share words on purpose: inviting a user and removing one; importing users and
 * exporting them; the idempotency key and the API key (synonyms.ts reads `key` as `api key`).
 */

const q = (intent: string, category: string | null, texts: string[]): LabelledQuestion[] =>
  texts.map((text) => ({ text, intent, category }));

export const HOLDOUT_SET: LabelledQuestion[] = [
  ...q('invite-user', 'Team', [
    'How do I invite a teammate?',
    'invite user',
    'add a new member to my workspace',
    'invite people to the dashboard',
    'invitation email never arrived',
    'Comment inviter un collègue ?',
  ]),
  ...q('remove-user', 'Team', [
    'how do I remove a user from my team',
    'remove member',
    'delete a user',
    'offboard an employee who left',
    'kick someone out of the workspace',
  ]),
  ...q('roles', 'Team', [
    'what roles are there',
    'admin vs member permissions',
    'give a user read-only access',
    'custom roles',
    'change a user role to admin',
    'Rollen und Berechtigungen',
  ]),
  ...q('scim', 'Authentication', [
    'SCIM provisioning',
    'does okta scim work',
    'automatically provision users from Azure AD',
    'scim',
    'user provisioning with scim',
  ]),
  ...q('import-users', 'Team', [
    'import users from a csv',
    'bulk import users',
    'can I upload a list of users',
  ]),
  ...q('export-users', 'Team', ['export the list of users', 'download all users as csv']),
  ...q('audit-logs', 'Security', [
    'audit log',
    'where can I see who changed what',
    'audit logs retention',
    'export audit logs to splunk',
    'activity log for admins',
  ]),
  ...q('ip-allowlist', 'Security', [
    'IP allowlist',
    'restrict access to our office IP addresses',
    'ip whitelist',
    'what IP addresses do your servers use',
    'static ip for outbound requests',
  ]),
  ...q('cors', 'API', [
    'CORS error when calling the API from the browser',
    'cors',
    'Access-Control-Allow-Origin header missing',
    'blocked by CORS policy',
    'can I call the api from frontend javascript',
  ]),
  ...q('upload-limit', 'API', [
    'max file upload size',
    'file too large error',
    '413 payload too large',
    'upload limit',
    'how big can an attachment be',
  ]),
  ...q('timeouts', 'API', [
    'request timeout',
    'my requests time out after 30 seconds',
    'how long before a request times out',
    '504 gateway timeout',
    'increase the timeout',
  ]),
  ...q('idempotency', 'API', [
    'idempotency key',
    'how do I avoid creating duplicates when I retry a request',
    'idempotent requests',
    'Idempotency-Key header',
    'idempotancy',
  ]),
  ...q('sandbox', 'API keys', [
    'is there a test mode',
    'sandbox environment',
    'test api key vs live api key',
    'can I try the api without being charged',
    'sandbox',
  ]),
  ...q('data-residency', 'Security', [
    'where is my data stored',
    'EU data residency',
    'can we host data in europe',
    'GDPR data location',
    '¿Dónde se almacenan los datos?',
  ]),
  ...q('invoices', 'Billing', [
    'where can I download invoices',
    'invoice',
    'need a receipt for my payment',
    'change billing address on invoice',
    'Rechnung herunterladen',
  ]),
  ...q('cancel-plan', 'Billing', [
    'how do I cancel my subscription',
    'cancel plan',
    'downgrade to free',
    'stop being charged',
  ]),
  ...q('changelog', null, [
    'changelog',
    'what changed in the latest version',
    'release notes',
    'breaking changes in v3',
  ]),
  ...q('openapi-upload', 'API reference', [
    'upload my openapi spec',
    'generate api reference from openapi',
    'swagger file',
    'openapi 3.1 support',
    'api reference pages from an openapi file',
  ]),
];
