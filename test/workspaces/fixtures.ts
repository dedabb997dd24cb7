import type { InstallationToSave } from '../../src/workspaces/vault.ts';

/** Secrets shaped like the real ones, none of which may reach a database in clear. */
export const SECRETS = {
  botToken: 'xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx',
  refreshToken: 'xoxe-1-My0xLTEyMzQ1Njc4OTAtcmVmcmVzaC10b2tlbi1zZWNyZXQ',
  userToken: 'xoxp-1234567890-1111-2222-userusertoken',
  docsKey: 'mint_Zq8vR3kL0pW2nX7yT5uB9cD1eF4gH6jA',
};

/** A workspace install as Bolt hands it over (token rotation on: a refresh token too). */
export function teamInstallation(teamId: string, enterpriseId: string | null = null) {
  return {
    enterpriseId,
    teamId,
    isEnterpriseInstall: false,
    installerUserId: 'U1',
    botUserId: 'B1',
    body: {
      team: { id: teamId, name: 'Acme' },
      enterprise: enterpriseId ? { id: enterpriseId } : undefined,
      user: { id: 'U1', token: SECRETS.userToken, scopes: ['identify'] },
      bot: {
        id: 'B1',
        userId: 'UB1',
        token: SECRETS.botToken,
        refreshToken: SECRETS.refreshToken,
        expiresAt: 1_900_000_000,
        scopes: ['chat:write', 'commands'],
      },
      tokenType: 'bot',
      isEnterpriseInstall: false,
      appId: 'A1',
    },
  } satisfies InstallationToSave;
}
