// The webhook area of the public API (contract section 4): event types, subscriptions, events,
// delivery attempts. Each sub-module registers its own routes.
import type { App, AppDeps } from '../platform/deps.ts';

export function registerWebhookRoutes(_app: App, _deps: AppDeps): void {}
