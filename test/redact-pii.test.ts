import { describe, expect, it } from 'vitest';
import { redactPii } from '../src/redact-pii.ts';

/**
 * Reader text as it reaches the bot: questions, search terms, comments, paths. Each row is
 * [what a reader wrote, what any report, form or prompt may show].
 */
const MASKED: [string, string][] = [
  // Emails
  ['my email is jane.doe+docs@example.co.uk, help', 'my email is [email], help'],
  ['Contact: JOHN_SMITH@ACME.COM', 'Contact: [email]'],
  ['mailto:ops@acme.io?subject=keys', 'mailto:[email]?subject=keys'],
  ['élodie.martin@société.fr ne reçoit rien', '[email] ne reçoit rien'],
  ['invite a@b.io and c.d@e-f.dev', 'invite [email] and [email]'],
  // Keys and tokens by prefix
  ['my key mint_4f9a2c1b7e8d0a3f stopped working', 'my key [key] stopped working'],
  ['mint_dsc_AbCdEf123456 in the widget', '[key] in the widget'],
  ['sk-proj-Abc123Def456Ghi789Jkl012 gives 401', '[key] gives 401'],
  ['sk-ant-api03-AbCdEfGhIjKlMnOpQrSt-uvw', '[key]'],
  ['Stripe sk_live_51HxYzAbCdEfGh0123 leaked?', 'Stripe [key] leaked?'],
  ['xoxb-1234567890-0987654321-AbCdEfGhIj', '[key]'],
  ['xoxp-12-34-56-abcdefabcdef and xapp-1-A0123-456-abcdef', '[key] and [key]'],
  ['token ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789', 'token [key]'],
  ['github_pat_11ABCDEFG0123456789_abcdefghijklmnop', '[key]'],
  ['glpat-xYz123AbC456dEf789gH', '[key]'],
  ['AWS AKIAIOSFODNN7EXAMPLE key', 'AWS [key] key'],
  ['maps AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW', 'maps [key]'],
  ['npm_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789', '[key]'],
  // JWTs, bearer credentials, private keys
  [
    'JWT eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U expired',
    'JWT [key] expired',
  ],
  ['Authorization: Bearer 8f3kd9Q2mZx71LpW', 'Authorization: Bearer [key]'],
  ['curl -H "Authorization: Basic dXNlcjpwYXNzd29yZA=="', 'curl -H "Authorization: Basic [key]"'],
  [
    'key: -----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\n-----END RSA PRIVATE KEY----- fails',
    'key: [key] fails',
  ],
  // Unprefixed random secrets
  ['secret 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08', 'secret [key]'],
  ['webhook secret 3F9A2C1B7E8D0A3F4B5C6D7E8F901234', 'webhook secret [key]'],
  ['aws secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY0 fails', 'aws secret [key] fails'],
  ['tok q8Zr2vLw9XkP4tYb7NcM1sHd5GfJ3aQe6UoI0', 'tok [key]'],
  // Secrets in URLs and assignments
  [
    'https://jane:hunter2@docs.acme.com/private page 404',
    'https://[secret]@docs.acme.com/private page 404',
  ],
  ['postgres://bot:p@ss:w0rd@db:5432/docs', 'postgres://[secret]@db:5432/docs'],
  [
    'https://docs.acme.com/reset?token=abc123&lang=en',
    'https://docs.acme.com/reset?token=[secret]&lang=en',
  ],
  [
    '/callback?code=4/0AY0e-g7&state=xyz&X-Amz-Signature=deadbeef',
    '/callback?code=[secret]&state=xyz&X-Amz-Signature=[secret]',
  ],
  ['set API_KEY=abc and PASSWORD="hunter two"', 'set API_KEY=[secret] and PASSWORD=[secret]'],
  ["export MINTLIFY_API_KEY='mint abc 123'", 'export MINTLIFY_API_KEY=[secret]'],
  ['{"api_key": "sk-proj-Abc123Def456Ghi789Jkl012"}', '{"api_key": [secret]}'],
  ['https://docs.acme.com/u/jane@acme.com/settings', 'https://docs.acme.com/u/[email]/settings'],
  // What readers really send: several at once
  [
    'Hi, I am jane@acme.com (+33 6 12 34 56 78). My key mint_9f8e7d6c5b4a3f2e fails with 401 on https://admin:S3cret!@api.acme.com/v1?api_key=abc',
    'Hi, I am [email] ([phone]). My key [key] fails with 401 on https://[secret]@api.acme.com/v1?api_key=[secret]',
  ],
  ['{"client_secret": "s3cr3tvalue"}', '{"client_secret": [secret]}'],
  ['my password: hunter2', 'my password: [secret]'],
  // Phones
  ['call me on +44 20 7946 0958', 'call me on [phone]'],
  ['+1 (555) 123-4567 or 555.987.6543', '[phone] or [phone]'],
  ['tel 06 12 34 56 78', 'tel [phone]'],
  ['Rufnummer 030 12345678 bitte', 'Rufnummer [phone] bitte'],
  ['0049 30 1234567', '[phone]'],
  ['+4915112345678', '[phone]'],
  ['numbers 555-123-4567 555-987-6543', 'numbers [phone] [phone]'],
  // Cards
  ['card 4111 1111 1111 1111 charged twice', 'card [card] charged twice'],
  ['4111111111111111', '[card]'],
];

/** Ordinary text that must come through untouched. */
const KEPT: string[] = [
  'How do I rotate API keys?',
  'v1.2.3 breaks the build, 2.0.0-beta.4 too',
  'error 404 on /api-reference/introduction',
  'Since 2026-11-22T12:00:00.000Z the job hangs',
  'between 2026-11-01 and 2026-11-14 10:30',
  'page id 123e4567-e89b-12d3-a456-426614174000 is blank',
  'job_7f3a2b1c9d8e',
  'rate limit 100 requests per hour, 1,000,000 a month',
  'budget 100 000 000 tokens',
  'epoch 1764000000 and 1764000000123',
  'server 192.168.100.200 refuses',
  'years 2019-2020-2021',
  'npm i @mintlify/components and mint@4.0.0 or mint@latest',
  'git@github.com:acme/docs.git',
  'Bearer token auth',
  'Authorization: Bearer YOUR_API_KEY',
  'what does key=value mean in frontmatter',
  'token: string in the schema',
  'max_tokens=500 is ignored',
  'getUserAccountSettingsByIdV2Handler returns null',
  '/guides/authentication/rotating-keys-and-secrets-v2',
  'sk-learn vs sklearn',
  'mint_ prefix?',
  'rotate my key?keyword=sso',
  'objectId 507f1f77bcf86cd799439011',
  'call me at 5551234567',
  '[email] is a placeholder',
  'Comment configurer le SSO avec Okta ?',
  'Wie kann ich API-Schlüssel rotieren?',
  '',
];

describe('redactPii', () => {
  it.each(MASKED)('masks %j', (text, masked) => {
    expect(redactPii(text)).toBe(masked);
  });

  it.each(KEPT)('keeps %j', (text) => {
    expect(redactPii(text)).toBe(text);
  });

  it('is idempotent: masked text is masked again to itself', () => {
    for (const [, masked] of MASKED) expect(redactPii(masked)).toBe(masked);
  });

  it('keeps up with long hostile text', () => {
    const text = `${'a1-'.repeat(20_000)} ${'+1 '.repeat(5_000)} ${'x@'.repeat(5_000)}`;
    const started = performance.now();
    redactPii(text);
    expect(performance.now() - started).toBeLessThan(500);
  });
});
