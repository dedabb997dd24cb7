/**
 * What real readers add to the emulator's insight data, switched on per test with
 * `api.insights.mix({...})` (analytics-insights.ts), on top of the seeded gaps:
 *
 * - `pii`: questions, search terms, comments and page paths holding an email address, a
 *   Mintlify key, an OpenAI key, a Slack token, a JWT, a phone number and a URL with a
 *   password and a token, the way readers paste them. Asked often enough to make the top of
 *   every list: a question topic asked 4 times (days 1–4), two search gaps (5–7 searches a
 *   day, no clicks), the latest comments on /guides/authentication (day 1, late), and a
 *   disliked page whose path carries a token.
 * - `typingPrefixes`: a search-as-you-type box logging what readers typed on the way
 *   ("rate lim", "rate limi" before "rate limits"), beside real short queries that must stay
 *   ("api", whole word of "api reference"; "auth", searched more than "authentication").
 * - `ctrUnit: 'percent'`: `ctr` sent as 0..100 instead of 0..1 (the document does not say).
 * - `paraphrases`: one need asked in words that share none ("Is the API down?", "Where is
 *   the status page?", "any outage today"), which only meaning can join (test/fakes/embeddings.ts
 *   gives them close vectors), and a question on the same page about something else.
 */

import type { SearchTerm, SeedGap } from './analytics-insights-seed.ts';

export interface InsightsMix {
  pii?: boolean;
  typingPrefixes?: boolean;
  ctrUnit?: 'fraction' | 'percent';
  paraphrases?: boolean;
}

/** Every secret or personal string below: none may reach Slack, a form or a prompt. */
export const PII = {
  email: 'jane.doe@acme-corp.com',
  /** Another reader's, searched too: masked, both are one "[email]" row. */
  otherEmail: 'j.smith@example.org',
  mintKey: 'mint_4f9a2c1b7e8d0a3f9b8c',
  openAiKey: 'sk-proj-Abc123Def456Ghi789Jkl012',
  slackToken: 'xoxb-1234567890-0987654321-AbCdEfGhIj',
  jwt: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
  phone: '+1 (555) 123-4567',
  /** The phone number's end, as a partly masked number would leak it. */
  phoneEnd: '123-4567',
  urlPassword: 'S3cretPass',
  urlToken: 'tok_9a8b7c6d5e',
  pathToken: 'reset123secret',
  otherPathToken: 'reset456other',
} as const;

export interface HostileGap extends SeedGap {
  pageUrl?: string;
}

/** Unanswered questions with personal data in them (and in the page they were asked on). */
export const PII_GAPS: HostileGap[] = [
  ...[1, 2, 3, 4].map((daysAgo) => ({
    query: `My key ${PII.mintKey} returns 401, email me at ${PII.email}`,
    daysAgo,
    category: 'API keys',
    pageUrl: `https://docs.acme.com/guides/authentication?api_key=${PII.mintKey}`,
  })),
  {
    query: `Is ${PII.openAiKey} the right key format? Call ${PII.phone}`,
    daysAgo: 2,
    category: 'API keys',
  },
  {
    query: `webhook to https://admin:${PII.urlPassword}@hooks.acme.com/in?token=${PII.urlToken} fails`,
    daysAgo: 3,
    category: 'Webhooks',
  },
  { query: `token ${PII.jwt} expired, slack ${PII.slackToken}`, daysAgo: 5, category: 'Auth' },
];

/** Search terms readers pasted their address and key into: no clicks. */
export const PII_SEARCH_TERMS: SearchTerm[] = [
  { term: PII.email, lo: 5, hi: 7, ctr: 0, page: null },
  { term: PII.otherEmail, lo: 1, hi: 2, ctr: 0, page: null },
  { term: `${PII.mintKey} invalid`, lo: 5, hi: 6, ctr: 0, page: null },
];

/** Thumbs down with comments holding personal data, the latest of their page. */
export const PII_FEEDBACK: { path: string; daysAgo: number; comment: string | null }[] = [
  {
    path: '/guides/authentication',
    daysAgo: 1,
    comment: `Wrong for me, reach me on ${PII.phone} or ${PII.email}`,
  },
  {
    path: '/guides/authentication',
    daysAgo: 1,
    comment: `my key ${PII.openAiKey} is rejected`,
  },
  ...[1, 2, 3].map((daysAgo) => ({
    path: `/guides/reset?token=${PII.pathToken}`,
    daysAgo,
    comment: null,
  })),
  { path: `/guides/reset?token=${PII.otherPathToken}`, daysAgo: 2, comment: null },
];

/** A term and the prefixes a search-as-you-type box logged on the way to it. */
export interface TypedTerm extends SearchTerm {
  /** Each logged with this share of the term's hits (rounded up), a few seconds before it. */
  prefixes: { text: string; share: number }[];
}

export const TYPED_TERMS: TypedTerm[] = [
  {
    term: 'rate limits',
    lo: 6,
    hi: 9,
    ctr: 0.5,
    page: '/api-reference/introduction',
    prefixes: [
      { text: 'rate lim', share: 0.9 },
      { text: 'rate limi', share: 0.8 },
    ],
  },
  {
    term: 'webhook signature',
    lo: 5,
    hi: 7,
    ctr: 0,
    page: null,
    prefixes: [
      { text: 'webho', share: 1 },
      { text: 'webhook sig', share: 0.9 },
      { text: 'webhook signa', share: 0.7 },
    ],
  },
];

/** Short queries of their own, which must not be folded into a longer one. */
export const SHORT_TERMS: SearchTerm[] = [
  { term: 'api', lo: 8, hi: 12, ctr: 0.5, page: '/api-reference/introduction' },
  { term: 'auth', lo: 20, hi: 30, ctr: 0.6, page: '/guides/authentication' },
];

/** One need in three wordings that share no word, and another need beside it. */
export const OUTAGE_QUESTIONS = [
  'Is the API down?',
  'Where is the status page?',
  'any outage today',
];
export const PARAPHRASE_GAPS: HostileGap[] = [
  ...OUTAGE_QUESTIONS.map((query, i) => ({ query, daysAgo: i + 1, category: 'Status' })),
  { query: 'Can I book a demo with sales?', daysAgo: 2, category: 'Status' },
];
