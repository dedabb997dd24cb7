import type { LabelledQuestion } from './grouping-set.ts';

/**
 * A third labelled set, written before any change made to lift the figures of sets A and B
 * (grouping-set.ts, grouping-holdout.ts), on other product areas again, and never used to
 * choose a method, a synonym or a threshold: its figures before and after a change say how
 * much that change was fitted to A and B. Do not tune on it; write a set D instead.
 *
 * As readers type into a docs assistant: questions, fragments, typos, paraphrases that share
 * no word ("is the api down" / "status page"; "talk to sales" / "book a demo"), a few in
 * French, German, Spanish and Portuguese. Intents that share words on purpose: deleting a page
 * and renaming one; previewing a pull request and previewing locally.
 */

const q = (intent: string, category: string | null, texts: string[]): LabelledQuestion[] =>
  texts.map((text) => ({ text, intent, category }));

export const HOLDOUT_SET_C: LabelledQuestion[] = [
  ...q('reset-password', 'Account', [
    'I forgot my password',
    'reset password',
    'pasword reset link not arriving',
    'how do I change my password',
    "can't log in, it says my password is wrong",
    'Passwort zurücksetzen',
  ]),
  ...q('change-email', 'Account', [
    'change the email on my account',
    'update email address',
    'I have a new work address, how do I switch my login to it',
    'Wie ändere ich meine E-Mail-Adresse?',
  ]),
  ...q('refund', 'Billing', [
    'can I get a refund',
    'refund policy',
    'I was charged twice this month',
    'money back for the unused months',
    'refnud',
    '¿Cómo pido un reembolso?',
  ]),
  ...q('trial', 'Billing', [
    'how long is the free trial',
    'trial length',
    'extend my trial',
    'does the trial need a credit card',
    'what happens when the trial ends',
  ]),
  ...q('status', null, [
    'is the api down',
    'status page',
    'service outage right now?',
    'getting 500s on every call, is something broken on your side',
    'is there an incident',
  ]),
  ...q('navigation', 'Customisation', [
    'how do I reorder pages in the sidebar',
    'change the navigation order',
    'add a group to the sidebar',
    'navigaton menu',
    'nested folders in the left menu',
  ]),
  ...q('code-blocks', 'Customisation', [
    'syntax highlighting for code blocks',
    'code block language',
    'add a copy button to code samples',
    'show the same snippet in python and javascript tabs',
    'syntx highlighting',
  ]),
  ...q('preview-pr', 'Deployment', [
    'preview deployments for pull requests',
    'see my changes before they go live',
    'preview link for a PR',
    'staging version of the docs for review',
  ]),
  ...q('local-dev', 'Deployment', [
    'run the docs locally',
    'local preview server',
    'dev server not starting on localhost',
    'how do I test my docs on my laptop before pushing',
  ]),
  ...q('versioning', null, [
    'multiple versions of the docs',
    'version switcher',
    'keep docs for v1 and v2 side by side',
    'versioned documentation',
    'versoin dropdown',
  ]),
  ...q('localization', 'Content', [
    'translate the docs into japanese',
    'multi-language docs',
    'i18n support',
    'Documentation en plusieurs langues',
    'can readers switch between english and german',
  ]),
  ...q('github-sync', 'Integrations', [
    'connect my github repo',
    'docs not updating after I push to github',
    'sync from a github repository',
    'github app permissions',
    'changes on main never show up on the site',
  ]),
  ...q('sales', null, [
    'talk to sales',
    'book a demo',
    'enterprise plan quote',
    'can someone walk our team through the enterprise features',
    'Falar com o comercial',
  ]),
  ...q('pdf-export', 'Content', [
    'download the docs as pdf',
    'pdf export',
    'print the whole documentation',
    'offline copy of the docs',
  ]),
  ...q('delete-page', 'Content', [
    'how do I delete a page',
    'remove a page from my docs',
    'get rid of an old page',
  ]),
  ...q('rename-page', 'Content', [
    'rename a page',
    'change the url slug of a page',
    'change a page title',
  ]),
  ...q('api-playground', 'API reference', [
    'api playground',
    'try it button on endpoints',
    'send a test request from the reference page',
    'interactive api explorer',
    'disable the playground for some endpoints',
  ]),
];

/** Two intents of set C that share words and must stay apart. */
export const KEPT_APART_C = ['delete-page', 'rename-page'] as const;
