import { describe, expect, it } from 'vitest';
import { guessLanguage } from '../../src/insights/languages.ts';
import { prepare, tokens } from '../../src/insights/normalise.ts';
import { compileLexicon } from '../../src/insights/synonyms.ts';
import {
  DEFAULT_GROUPING,
  DEFAULT_SIMILARITY,
  groupTopicSteps,
  groupTopics,
} from '../../src/insights/topics.ts';
import { typoMap } from '../../src/insights/typos.ts';
import { inTurns } from '../../src/reports/turns.ts';
import {
  DELETE_KEY_QUESTIONS,
  GERMAN_QUESTION,
  ROTATE_KEY_QUESTIONS,
  SSO_QUESTIONS,
  seededGaps,
  WEBHOOK_QUESTIONS,
} from '../fakes/analytics-insights-seed.ts';
import { timingCorpus } from './grouping-eval.ts';

describe('normalisation', () => {
  it('stems words in their language, folds accents after, drops stop words', () => {
    expect(tokens('How do I rotate my API keys??')).toEqual(['key', 'rotat']);
    expect(tokens('API key rotation')).toEqual(['key', 'rotat']);
    expect(tokens('Rotating an API-key – how?')).toEqual(['key', 'rotat']);
    // A bare `api` is a question word (languages.ts): most of an API product's questions name it.
    expect(tokens('Comment configurer les clés API ?')).toEqual(['cle', 'configur']);
    // `rotar` has the Spanish stem of `rotate`, a built-in synonym phrase (stemmed in every language).
    expect(tokens('¿Cómo puedo rotar mis claves?')).toEqual(['clav', 'mis', 'rotat']);
    expect(tokens('??? !!!')).toEqual([]);
  });

  it('keeps apart the words the 5-letter cut merged', () => {
    for (const [a, b] of [
      ['contact', 'container'],
      ['analytics', 'analysis'],
      ['integration', 'integer'],
    ])
      expect(tokens(a!)).not.toEqual(tokens(b!));
  });

  it('guesses the language from at least two of its stop words, else English', () => {
    const guess = (t: string) => guessLanguage(t.toLowerCase(), prepare(t).folded);
    expect(guess('¿Dónde se almacenan los datos?')).toBe('es');
    expect(guess('Wie kann ich API-Schlüssel rotieren?')).toBe('de');
    expect(guess('Comment inviter un collègue ?')).toBe('fr');
    expect(guess('EU data residency')).toBe('en'); // `eu` alone is not Portuguese
    expect(guess('automatically provision users from Azure AD')).toBe('en'); // nor `ad` Italian
  });

  it('reads synonyms and abbreviations as one term, longest phrase first', () => {
    for (const text of ['SSO', 'SAML', 'single sign-on', 'Single Sign On'])
      expect(tokens(text)).toEqual(['sso']);
    expect(tokens('okta sso')).toEqual(['okta', 'sso']); // the provider stays a word of its own
    for (const text of ['429', 'too many requests', 'rate limits', 'throttled', 'rate-limiting'])
      expect(tokens(text)).toEqual(['rate_limit']);
    for (const text of ['2FA', 'MFA', 'two-factor authentication', 'multi-factor'])
      expect(tokens(text)).toEqual(['2fa']);
    // An access token is not an API key.
    expect(tokens('access token')).toEqual(['access', 'token']);
  });

  it('adds a team’s groups to the built-in ones, joining groups that share a phrase', () => {
    const lexicon = compileLexicon([
      ['sso', 'entra id'],
      ['pr', 'pull request'],
    ]);
    expect(tokens('Entra ID', lexicon)).toEqual(['sso']);
    expect(tokens('SAML', lexicon)).toEqual(['sso']);
    expect(tokens('open a pull request', lexicon)).toEqual(['open', 'pr']);
    expect(tokens('Entra ID')).toEqual(['entra', 'id']);
  });

  it('folds a rare word into a more common one one edit away, never short ones', () => {
    const counts = new Map([
      ['rotate', 4],
      ['rotaet', 1],
      ['pagination', 3],
      ['pagnation', 1],
      ['ssl', 1],
      ['contact', 1],
      ['contract', 1],
    ]);
    const map = typoMap(counts, new Set(['sso', 'single']), () => false);
    expect(Object.fromEntries(map)).toEqual({ rotaet: 'rotate', pagnation: 'pagination' });
    expect(typoMap(new Map([['singel', 1]]), new Set(['single']), () => false).get('singel')).toBe(
      'single',
    );
  });
});

describe('grouping', () => {
  const seeded = seededGaps().map((g) => ({ text: g.query, category: g.category }));

  it('merges the rotate-key paraphrases into one topic and keeps them verbatim', () => {
    const [first] = groupTopics(seeded);
    expect(first?.count).toBe(14);
    expect(first?.variants.map((v) => v.text).sort()).toEqual([...ROTATE_KEY_QUESTIONS].sort());
    expect(ROTATE_KEY_QUESTIONS).toContain(first?.example);
    expect(first?.category).toBe('API keys');
  });

  it('keeps near misses apart: deleting a key is not rotating one, in the same category', () => {
    const topics = groupTopics(seeded);
    const del = topics.find((t) => t.variants.some((v) => v.text === DELETE_KEY_QUESTIONS[0]));
    expect(del?.count).toBe(2);
    expect(del?.variants.map((v) => v.text)).toEqual(expect.arrayContaining(DELETE_KEY_QUESTIONS));
    const webhooks = topics.find((t) => t.words.includes('webhook'));
    expect(webhooks?.variants.map((v) => v.text).sort()).toEqual([...WEBHOOK_QUESTIONS].sort());
  });

  it('groups the SSO wordings, French included, and leaves German unmatched words alone', () => {
    const topics = groupTopics(seeded);
    const sso = topics.find((t) => t.variants.some((v) => v.text === SSO_QUESTIONS[0]));
    expect(sso?.variants.map((v) => v.text).sort()).toEqual([...SSO_QUESTIONS].sort());
    const german = topics.find((t) => t.variants.some((v) => v.text === GERMAN_QUESTION));
    expect(german?.count).toBe(1); // "Schlüssel" is not "key": no translation built in
  });

  it('never joins texts the service put in different categories', () => {
    const texts = [
      { text: 'rotate api key', category: 'API keys' },
      { text: 'rotate api key', category: 'API keys' },
      { text: 'Rotate API keys', category: 'Security' },
      { text: 'api key rotation', category: null },
    ];
    const topics = groupTopics(texts);
    expect(topics.map((t) => [t.count, t.category])).toEqual([
      [3, 'API keys'],
      [1, 'Security'],
    ]);
    const ignored = groupTopics(texts, { ...DEFAULT_GROUPING, categories: false });
    expect(ignored.map((t) => t.count)).toEqual([4]);
  });

  it('threshold: 1 joins only texts with the same terms, 0.01 joins any that share one', () => {
    const texts = ['rotate api key', 'API key rotation', 'delete api key'].map((text) => ({
      text,
    }));
    const strict = groupTopics(texts, { ...DEFAULT_GROUPING, threshold: 1 });
    expect(strict.map((t) => t.count)).toEqual([2, 1]);
    const loose = groupTopics(texts, { ...DEFAULT_GROUPING, threshold: 0.01 });
    expect(loose.map((t) => t.count)).toEqual([3]);
    expect(DEFAULT_SIMILARITY).toBe(0.3);
  });

  it('sums counts, picks the most asked then latest example, and groups wordless text alone', () => {
    const topics = groupTopics([
      { text: 'rotate api key', count: 3, at: '2026-11-01T00:00:00Z' },
      { text: 'Rotate API keys', count: 3, at: '2026-11-05T00:00:00Z' },
      { text: '???', count: 2 },
      { text: '!!!', count: 1 },
      { text: '   ' },
    ]);
    expect(topics[0]).toMatchObject({ count: 6, example: 'Rotate API keys' });
    expect(topics[0]?.lastAt).toBe('2026-11-05T00:00:00Z');
    expect(topics.slice(1).map((t) => [t.example, t.count])).toEqual([
      ['???', 2],
      ['!!!', 1],
    ]);
  });

  it('breaks ties by distinct wordings, then the latest asked, then arrival, never the alphabet', () => {
    const topics = groupTopics([
      { text: 'zapier webhook', at: '2026-11-01T00:00:00Z' },
      { text: 'billing invoice', at: '2026-11-03T00:00:00Z' },
      { text: 'custom domain', at: '2026-11-02T00:00:00Z' },
      { text: 'custom domains', at: '2026-11-01T00:00:00Z' },
      { text: 'yaml frontmatter' },
      { text: 'xml sitemap' },
    ]);
    expect(topics.map((t) => t.example)).toEqual([
      'custom domain', // 2 wordings
      'billing invoice', // then the latest asked
      'zapier webhook',
      'yaml frontmatter', // then the order they came in
      'xml sitemap',
    ]);
  });
});

describe('grouping thousands of questions', () => {
  const inputs = timingCorpus(5_000);

  it('gives the event loop back while it groups, with the same outcome as in one go', async () => {
    let turns = 0;
    let grouping = true;
    const tick = () => {
      turns++;
      if (grouping) setImmediate(tick);
    };
    setImmediate(tick);
    const topics = await inTurns(groupTopicSteps(inputs));
    grouping = false;
    expect(topics).toEqual(groupTopics(inputs));
    expect(topics.reduce((n, t) => n + t.count, 0)).toBe(5_000);
    expect(turns).toBeGreaterThan(10);
  });
});
