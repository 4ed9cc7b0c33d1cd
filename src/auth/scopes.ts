// Permissions are scopes on the client (D6). Later payment areas add their own here.
export const SCOPES = {
  webhooksRead: 'webhooks:read',
  webhooksWrite: 'webhooks:write',
} as const;

export const ALL_SCOPES: readonly string[] = Object.values(SCOPES);
