import { describe, expect, it } from 'vitest';
import { jaccard, stem, tokens } from '../../src/insights/normalise.ts';
import { groupTopicSteps, groupTopics, MERGE_THRESHOLD } from '../../src/insights/topics.ts';
import { inTurns } from '../../src/reports/turns.ts';
import {
  DELETE_KEY_QUESTIONS,
  GERMAN_QUESTION,
  ROTATE_KEY_QUESTIONS,
  SSO_QUESTIONS,
  WEBHOOK_QUESTIONS,
} from '../fakes/analytics-insights-seed.ts';

describe('normalisation', () => {
  it('folds case, accents and punctuation, drops stop words, stems to five letters', () => {
    expect(tokens('How do I rotate my API keys??')).toEqual(['api', 'key', 'rotat']);
    expect(tokens('API key rotation')).toEqual(['api', 'key', 'rotat']);
    expect(tokens('Rotating an API-key – how?')).toEqual(['api', 'key', 'rotat']);
    expect(tokens('Comment configurer les clés API ?')).toEqual(['api', 'cle', 'confi']);
    expect(tokens('¿Cómo puedo rotar mis claves?')).toEqual(['clave', 'rotar']);
    expect(tokens('??? !!!')).toEqual([]);
  });

  it('stems plurals and verb endings without eating short words', () => {
    expect(['retries', 'retried', 'retry'].map(stem)).toEqual(['retry', 'retry', 'retry']);
    expect(['settings', 'setting'].map(stem)).toEqual(['sett', 'sett']);
    expect(['class', 'status', 'analysis', 'keys', 'uses'].map(stem)).toEqual([
      'class',
      'statu',
      'analy',
      'key',
      'use',
    ]);
  });

  it('measures overlap as token-set Jaccard', () => {
    expect(jaccard(['api', 'key', 'rotat'], ['api', 'delet', 'key'])).toBe(0.5);
    expect(jaccard(['a', 'b', 'c'], ['a', 'b', 'c', 'd'])).toBe(0.75);
    expect(jaccard([], [])).toBe(0);
  });
});

describe('grouping', () => {
  const seeded = [
    ...ROTATE_KEY_QUESTIONS,
    ...SSO_QUESTIONS,
    ...WEBHOOK_QUESTIONS,
    ...DELETE_KEY_QUESTIONS,
    GERMAN_QUESTION,
  ].map((text) => ({ text }));

  it('merges the 14 rotate-key paraphrases into one topic and keeps them verbatim', () => {
    const [first] = groupTopics(seeded);
    expect(first?.count).toBe(14);
    expect(first?.variants.map((v) => v.text).sort()).toEqual([...ROTATE_KEY_QUESTIONS].sort());
    expect(ROTATE_KEY_QUESTIONS).toContain(first?.example);
  });

  it('keeps near misses apart: deleting a key is not rotating one', () => {
    const topics = groupTopics(seeded);
    const del = topics.find((t) => t.variants.some((v) => v.text === DELETE_KEY_QUESTIONS[0]));
    expect(del?.count).toBe(2);
    expect(del?.variants.map((v) => v.text)).toEqual(expect.arrayContaining(DELETE_KEY_QUESTIONS));
    const webhooks = topics.find((t) => t.words.includes('webho'));
    expect(webhooks?.count).toBe(4); // "webhook retry policy": 2 of 3 words, 0.67
  });

  it('merges across languages only where the stems meet', () => {
    const topics = groupTopics(seeded);
    const french = topics.find((t) => t.variants.some((v) => v.text === SSO_QUESTIONS[4]));
    expect(french?.variants.map((v) => v.text)).toContain('SSO Okta configuration?');
    const german = topics.find((t) => t.variants.some((v) => v.text === GERMAN_QUESTION));
    expect(german?.count).toBe(1); // "Schlüssel" is not "key": no translation
  });

  it('compares with the leader, so chains of small steps do not drift', () => {
    const chain = [
      { text: 'rotate api key', count: 5 },
      { text: 'rotate api key python', count: 2 }, // 3/4 with the leader: joins
      { text: 'api key python sdk', count: 1 }, // 2/5 with the leader: its own topic
    ];
    const topics = groupTopics(chain);
    expect(topics.map((t) => t.count)).toEqual([7, 1]);
    expect(MERGE_THRESHOLD).toBe(0.6);
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
});

describe('grouping thousands of questions', () => {
  // Questions drawn from a few dozen words: many distinct texts, many sharing words.
  const WORDS =
    'api key rotate delete sso okta setup configure webhook python sdk install error auth token limit rate page search deploy domain custom theme navigation analytics export csv login github gitlab branch preview snippet openapi playground'.split(
      ' ',
    );
  let seed = 7;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const inputs = Array.from({ length: 5_000 }, () => ({
    text: Array.from(
      { length: 3 + Math.floor(rnd() * 4) },
      () => WORDS[Math.floor(rnd() * 34)],
    ).join(' '),
  }));

  /** The rule as the README states it, leader by leader, with no index. */
  function byTheRule(texts: { text: string }[]): string[][] {
    const counts = new Map<string, { words: string[]; count: number }>();
    for (const { text } of texts) {
      const words = tokens(text);
      const k = words.join(' ');
      const c = counts.get(k) ?? { words, count: 0 };
      c.count++;
      counts.set(k, c);
    }
    const sets = [...counts.values()].sort(
      (a, b) => b.count - a.count || (a.words.join(' ') < b.words.join(' ') ? -1 : 1),
    );
    const topics: { leader: string[]; keys: string[] }[] = [];
    for (const s of sets) {
      const home = topics.find((t) => jaccard(t.leader, s.words) >= MERGE_THRESHOLD);
      if (home) home.keys.push(s.words.join(' '));
      else topics.push({ leader: s.words, keys: [s.words.join(' ')] });
    }
    return topics.map((t) => t.keys.sort()).sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
  }

  it('finds the same topics as comparing every leader, through its word index', () => {
    const found = groupTopics(inputs)
      .map((t) => [...new Set(t.variants.map((v) => tokens(v.text).join(' ')))].sort())
      .sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
    expect(found).toEqual(byTheRule(inputs));
  });

  it('gives the event loop back while it groups', async () => {
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
    // Grouping 5,000 texts takes a few hundred milliseconds: in steps of a few each.
    expect(turns).toBeGreaterThan(10);
  });
});
