// Sandbox-only endpoints (D11); registered only when APP_ENV=sandbox.
import type { App, AppDeps } from '../platform/deps.ts';

export function registerSandboxRoutes(_app: App, _deps: AppDeps): void {}
