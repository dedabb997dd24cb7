import { expect, it } from 'vitest';
import { queuedText } from '../../src/jobs/root-steps.ts';

it('tells a short wait without a count of seconds, and a longer one with it', () => {
  expect(queuedText(1_200)).toMatch(/will appear in a few seconds\.$/);
  expect(queuedText(2_400)).toMatch(/will appear in a few seconds\.$/);
  expect(queuedText(6_600)).toMatch(/will appear in about 7 s\.$/);
});
