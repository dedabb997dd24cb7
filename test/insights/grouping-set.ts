/**
 * A labelled set for measuring question grouping (`npm run eval:grouping`,
 * test/insights/grouping-eval.test.ts). Written before the grouping it measures, as readers
 * type into a docs assistant: whole questions, paraphrases, search-like fragments, typos,
 * a few in French, German, Spanish and Portuguese. Each question carries the intent a person
 * would file it under, and the `queryCategory` the service could plausibly have given it
 * (coarse: one category holds several intents; null where the service gave none; a few
 * put where a person would not have put them, as an automatic categoriser does).
 *
 * Intents that share words on purpose: rotating a key and deleting one; contacting support
 * and running a container; the Slack integration and integer fields; analytics export and
 * the analysis of a failed build. Do not tune the grouping to this set: add to it instead.
 */

export interface LabelledQuestion {
  text: string;
  intent: string;
  category: string | null;
}

const q = (intent: string, category: string | null, texts: string[]): LabelledQuestion[] =>
  texts.map((text) => ({ text, intent, category }));

export const GROUPING_SET: LabelledQuestion[] = [
  ...q('rotate-key', 'API keys', [
    'How do I rotate API keys?',
    'rotate api key',
    'API key rotation',
    'Can I rotate my API key without downtime?',
    'how often should keys be rotated',
    'rotaet api key',
    'is there a way to roll my api key and keep the old one working for a day',
    'key rotation best practice',
    'Wie kann ich API-Schlüssel rotieren?',
    'Comment faire une rotation de ma clé API ?',
  ]),
  ...q('rotate-key', null, ['regenerate api key', 'rotating keys']),
  ...q('delete-key', 'API keys', [
    'How do I delete an API key?',
    'delete api key',
    'revoke an API key',
    'my key leaked, how do I revoke it',
    'remove old api keys',
    'can I delete a key that is still in use',
    '¿Cómo elimino una clave de API?',
  ]),
  ...q('delete-key', null, ['deleting keys']),
  ...q('sso', 'Authentication', [
    'Does it support SSO with Okta?',
    'How to set up Okta SSO',
    'okta sso',
    'SAML',
    'single sign-on with Azure AD',
    'configure SAML for my organisation',
    'can we log in with Google Workspace SSO',
    'Comment configurer le SSO avec Okta ?',
    'sso setup',
  ]),
  ...q('sso', null, ['singel sign on', 'saml sso okta']),
  ...q('rate-limit', 'API', [
    'What are the API rate limits?',
    'getting 429 too many requests',
    '429',
    'how many requests per minute can I make',
    'my requests are being throttled',
    'rate limit',
    'ratelimit headers',
    'Too Many Requests error from the API',
    'is there a limit on calls per second',
    'Límite de peticiones de la API',
  ]),
  ...q('rate-limit', 'API keys', ['does each api key have its own rate limit']),
  ...q('webhook-retry', 'Webhooks', [
    'Are webhooks retried?',
    'webhook retries',
    'what happens if my webhook endpoint is down',
    'webhook retry policy',
    'how many times do you retry a failed webhook delivery',
    'webhok retry',
    'webhook delivery failed, will it be sent again?',
  ]),
  ...q('webhook-verify', 'Webhooks', [
    'how do I verify a webhook signature',
    'webhook signature verification',
    'validate webhook signing secret',
    'HMAC signature header on webhooks',
  ]),
  ...q('two-factor', 'Authentication', [
    'how do I enable 2FA',
    'two-factor authentication',
    'enforce MFA for my team',
    'set up an authenticator app',
    'Zwei-Faktor-Authentifizierung aktivieren',
  ]),
  ...q('two-factor', null, ['2fa', 'mfa']),
  ...q('custom-domain', 'Domains', [
    'How do I set up a custom domain?',
    'custom domain',
    'use my own domain like docs.acme.com',
    'what CNAME record do I add',
    'custom domian not working',
    'Como configurar um domínio personalizado?',
  ]),
  ...q('custom-domain', null, ['host docs on our subdomain']),
  ...q('analytics-export', 'Analytics', [
    'export analytics to csv',
    'can I download my analytics data',
    'analytics export',
    'export page views',
    'send analytics to BigQuery',
  ]),
  ...q('build-failure', 'Deployment', [
    'build failed, how do I see the analysis of what went wrong',
    'deployment failed',
    'why did my build fail',
    'build logs',
    'deploy error: build step exited with code 1',
  ]),
  ...q('contact-support', null, [
    'how do I contact support',
    'support email address',
    'talk to a human',
    'where can I reach your support team',
    'contact support',
  ]),
  ...q('docker', 'Deployment', [
    'run the docs in a docker container',
    'docker image for local preview',
    'is there a Dockerfile',
    'container keeps restarting',
  ]),
  ...q('pagination', 'API', [
    'how does pagination work',
    'paginate the list endpoint',
    'cursor pagination',
    'how do I get the next page of results',
    'how to fetch more than 100 results',
    'pagnation',
  ]),
  ...q('slack-integration', 'Integrations', [
    'Slack integration',
    'connect to Slack',
    'how do I integrate with Slack',
    'send notifications to a slack channel',
    'slack app',
  ]),
  ...q('integer-field', 'API', [
    'integer field comes back as a string',
    'openapi integer format int64',
    'is the id an integer or a string',
  ]),
  ...q('search-missing', 'Search', [
    'search does not find my page',
    'page not showing up in search',
    'search results are outdated',
    'new pages missing from search',
    'search index not updating',
  ]),
  ...q('theme-colors', 'Customisation', [
    'change the primary color',
    'customize theme colors',
    'dark mode logo',
    'brand colours',
    'how do I change the colours of the docs',
  ]),
  ...q('redirects', null, [
    'set up redirects',
    'redirect old urls to new pages',
    '301 redirect',
    'moved a page, old links are broken',
  ]),
  ...q('python-sdk', 'SDKs', [
    'install the python sdk',
    'pip install',
    'python client library',
    'is there a Python SDK?',
  ]),
  ...q('pricing', null, ['how much does it cost', 'pricing for startups', 'pricing']),
  ...q('delete-account', 'Account', ['how do I delete my account', 'close my account']),
  ...q('token-expiry', 'Authentication', [
    'how long does an access token last',
    'token expired',
    'refresh token expiry',
  ]),
];

/** The two intents that share most words and must stay apart. */
export const KEPT_APART = ['rotate-key', 'delete-key'] as const;
