import { describe, expect, it } from 'vitest';
import {
  AssistantPage,
  FeedbackByPage,
  FeedbackPage,
  SearchesPage,
} from '../../src/api/insights-schemas.ts';
import {
  maskAssistantPage,
  maskByPage,
  maskFeedbackPage,
  maskSearchesPage,
  samePathsMerged,
} from '../../src/insights/mask.ts';

/** Each page's reader-written fields are masked, and only those. */

const EMAIL = 'jane@acme.io';
const KEY = 'mint_4f9a2c1b7e8d0a3f';
const AT = '2026-11-20T12:00:00.000Z';

describe('masking the pages the insights sources read', () => {
  it('masks search terms and the pages they clicked', () => {
    const page = SearchesPage.parse({
      searches: [
        {
          searchQuery: EMAIL,
          hits: 5,
          ctr: 0,
          topClickedPage: `/u?token=${KEY}`,
          lastSearchedAt: AT,
        },
      ],
      totalSearches: 5,
      nextCursor: null,
    });
    expect(maskSearchesPage(page).searches[0]).toEqual({
      searchQuery: '[email]',
      hits: 5,
      ctr: 0,
      topClickedPage: '/u?token=[secret]',
      lastSearchedAt: AT,
    });
  });

  it('masks questions and the page they were asked on, not the ids, answer or category', () => {
    const page = AssistantPage.parse({
      conversations: [
        {
          id: '01JABCDEFGHJKMNPQRSTVWXYZ0',
          timestamp: AT,
          query: `my key ${KEY}`,
          response: 'See /guides/authentication.',
          sources: [],
          resolutionStatus: 'unanswered',
          queryCategory: 'API keys',
          pageUrl: `https://docs.acme.com/x?api_key=${KEY}`,
        },
      ],
      nextCursor: null,
      hasMore: false,
    });
    expect(maskAssistantPage(page).conversations[0]).toMatchObject({
      id: '01JABCDEFGHJKMNPQRSTVWXYZ0',
      query: 'my key [key]',
      response: 'See /guides/authentication.',
      queryCategory: 'API keys',
      pageUrl: 'https://docs.acme.com/x?api_key=[secret]',
    });
  });

  it('masks every text of a feedback entry, the fields it does not declare too, and by-page paths', () => {
    const page = FeedbackPage.parse({
      feedback: [
        {
          id: 'fb_1',
          path: `/reset?token=${KEY}`,
          comment: `mail ${EMAIL}`,
          createdAt: AT,
          source: 'code_snippet',
          status: 'pending',
          code: `curl -H "Authorization: Bearer ${KEY}"`,
        },
      ],
      nextCursor: null,
      hasMore: false,
    });
    expect(maskFeedbackPage(page).feedback[0]).toEqual({
      id: 'fb_1',
      path: '/reset?token=[secret]',
      comment: 'mail [email]',
      createdAt: AT,
      source: 'code_snippet',
      status: 'pending',
      code: 'curl -H "Authorization: Bearer [key]"',
    });
    const byPage = FeedbackByPage.parse({
      feedback: [{ path: `/u/${EMAIL}`, thumbsUp: 0, thumbsDown: 2, code: 0, total: 2 }],
      hasMore: false,
    });
    expect(maskByPage(byPage).feedback[0]?.path).toBe('/u/[email]');
  });

  it('adds up the votes of pages whose paths read the same once masked', () => {
    const votes = (path: string, down: number) => ({
      path,
      thumbsUp: 1,
      thumbsDown: down,
      code: 0,
      total: down + 1,
    });
    expect(
      samePathsMerged([
        votes('/r?token=[secret]', 3),
        votes('/a', 1),
        votes('/r?token=[secret]', 1),
      ]),
    ).toEqual([
      { path: '/r?token=[secret]', thumbsUp: 2, thumbsDown: 4, code: 0, total: 6 },
      votes('/a', 1),
    ]);
  });
});
