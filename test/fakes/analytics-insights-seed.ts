/**
 * The emulator's seeded insight data, where the content gaps are known, so tests can assert on
 * them. Every record is placed relative to the emulator's "today" (UTC) and is a pure function
 * of (seed, day): the same clock gives the same answers, run after run.
 *
 * Known gaps (unanswered assistant questions), one question per listed day before today:
 * - 14 paraphrases of "how do I rotate API keys", on days today-1 … today-14;
 * - 5 questions about SSO with Okta (one in French), days today-1, -3, -5, -7, -9;
 * - 4 about webhook retries, days today-2, -4, -6, -8; 2 about deleting an API key (a near
 *   miss of the rotation topic), days today-3, -10; 1 in German about rotating keys, today-6.
 * Searches with hits and no clicks: "rotate api key", "webhook retries"; very low CTR: "okta".
 * Disliked pages: /guides/authentication (most thumbs down), /api-reference/introduction.
 */

export const ROTATE_KEY_QUESTIONS = [
  'How do I rotate API keys?',
  'how do i rotate my api key',
  'Rotate API key',
  'rotating api keys',
  'API key rotation',
  'How to rotate an API key?',
  'Best way to rotate API keys?',
  'Can I rotate API keys without downtime?',
  'rotate my API keys',
  'How can I rotate the API key?',
  'api keys rotation',
  'Is there a way to rotate API keys',
  'how do you rotate api keys??',
  'Rotating an API key – how?',
];
export const SSO_QUESTIONS = [
  'Does Mintlify support SSO with Okta?',
  'How to set up Okta SSO',
  'okta sso setup',
  'SSO Okta configuration?',
  'Comment configurer le SSO avec Okta ?',
];
export const WEBHOOK_QUESTIONS = [
  'Are webhooks retried?',
  'webhook retries',
  'do webhooks get retried',
  'webhook retry policy',
];
export const DELETE_KEY_QUESTIONS = ['How do I delete an API key?', 'delete api key'];
export const GERMAN_QUESTION = 'Wie kann ich API-Schlüssel rotieren?';

export interface SeedGap {
  query: string;
  daysAgo: number;
  category: string;
  /** The docs page the reader was on when asking (2 in 3 conversations say so). */
  page?: string;
}

/** Where readers asked about keys: the authentication guide and the API reference, by turns. */
const KEY_PAGES = ['/guides/authentication', '/api-reference/introduction'];

export function seededGaps(): SeedGap[] {
  const keys = (query: string, daysAgo: number, i: number) => ({
    query,
    daysAgo,
    category: 'API keys',
    page: KEY_PAGES[i % 2]!,
  });
  return [
    ...ROTATE_KEY_QUESTIONS.map((query, i) => keys(query, i + 1, i)),
    ...SSO_QUESTIONS.map((query, i) => ({
      query,
      daysAgo: 2 * i + 1,
      category: 'Auth',
      page: '/guides/authentication',
    })),
    ...WEBHOOK_QUESTIONS.map((query, i) => ({
      query,
      daysAgo: 2 * i + 2,
      category: 'Webhooks',
      page: '/api-reference/introduction',
    })),
    keys(DELETE_KEY_QUESTIONS[0]!, 3, 0),
    keys(DELETE_KEY_QUESTIONS[1]!, 10, 1),
    keys(GERMAN_QUESTION, 6, 0),
  ];
}

/** Questions the docs answer; each appears 0–3 times a day. */
export const ANSWERED_QUESTIONS: { query: string; page: string }[] = [
  { query: 'How do I install the CLI?', page: '/installation' },
  { query: 'What is the quickstart?', page: '/quickstart' },
  { query: 'How do I authenticate requests?', page: '/guides/authentication' },
  { query: 'Where is the API reference?', page: '/api-reference/introduction' },
  { query: 'What changed in the last release?', page: '/changelog' },
  { query: 'How do I add a custom domain?', page: '/guides/page-0001' },
  { query: 'Can I use MDX components?', page: '/guides/page-0002' },
  { query: 'How do I preview locally?', page: '/installation' },
  { query: 'How do I add a navigation group?', page: '/guides/page-0003' },
  { query: 'What plans are there?', page: '/' },
  { query: 'How do I generate an API key?', page: '/guides/authentication' },
  { query: 'How do I deploy my docs?', page: '/quickstart' },
];

export interface SearchTerm {
  term: string;
  /** Daily hits between lo and hi on a day the term is searched. */
  lo: number;
  hi: number;
  ctr: number;
  page: string | null;
}

export const SEARCH_TERMS: SearchTerm[] = [
  { term: 'quickstart', lo: 15, hi: 25, ctr: 0.8, page: '/quickstart' },
  { term: 'authentication', lo: 10, hi: 14, ctr: 0.6, page: '/guides/authentication' },
  { term: 'api reference', lo: 6, hi: 10, ctr: 0.7, page: '/api-reference/introduction' },
  { term: 'install', lo: 5, hi: 8, ctr: 0.75, page: '/installation' },
  { term: 'rotate api key', lo: 5, hi: 7, ctr: 0, page: null },
  { term: 'okta', lo: 5, hi: 7, ctr: 0.03, page: '/guides/authentication' },
  { term: 'webhook retries', lo: 2, hi: 4, ctr: 0, page: null },
  { term: 'changelog', lo: 2, hi: 4, ctr: 0.9, page: '/changelog' },
];
/** Long tail: `tail term NNN`, one hit on about one day in nine. */
export const TAIL_TERMS = 250;

export interface PageVotes {
  path: string;
  /** Most votes of each kind a day. */
  up: number;
  down: number;
  comments: string[];
  /** Code-snippet feedback entries a day, at most. */
  code?: number;
}

export const PAGE_VOTES: PageVotes[] = [
  {
    path: '/guides/authentication',
    up: 1,
    down: 3,
    comments: [
      'The OAuth example is out of date',
      'Nothing about rotating keys',
      'Token refresh section is confusing & wrong <!channel>',
    ],
  },
  { path: '/quickstart', up: 4, down: 1, comments: ['Step 3 fails on Windows'] },
  { path: '/installation', up: 2, down: 0, comments: [] },
  {
    path: '/api-reference/introduction',
    up: 1,
    down: 2,
    comments: ['Where is the rate limit documented?'],
    code: 1,
  },
  { path: '/changelog', up: 1, down: 0, comments: [] },
];
/** Pages `/guides/page-00NN` with one thumbs up on about one day in five. */
export const TAIL_PAGES = 30;
