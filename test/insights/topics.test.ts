import { describe, expect, it } from 'vitest';
import { jaccard, stem, tokens } from '../../src/insights/normalise.ts';
import { groupTopics, MERGE_THRESHOLD } from '../../src/insights/topics.ts';
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
