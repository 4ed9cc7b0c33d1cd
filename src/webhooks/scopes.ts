// Permissions of the webhook area (D6).
export const WEBHOOK_SCOPES = {
  read: 'webhooks:read',
  write: 'webhooks:write',
} as const;
