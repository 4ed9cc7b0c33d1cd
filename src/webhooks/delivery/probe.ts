// The health probe of D9: before an auto_disabled subscription becomes active again, the service sends
// one signed `webhook.ping` to its endpoint (10 s timeout, the same SSRF and TLS rules as deliveries).
// Only a 2xx answer counts as healthy. Nothing is stored: the probe is not a delivery of any event.
import type { AppDeps } from '../../platform/deps.ts';
import { newDeliveryHeaderId, newEventPublicId } from '../../platform/ids.ts';
import { buildPayload } from '../publish.ts';
import { createDeliveryAgent, type SendResult, sendWebhook, type TransportOptions } from './send.ts';
import { signingKey, webhookHeaders } from './sign.ts';

export const PROBE_TIMEOUT_MS = 10_000;
export const PROBE_EVENT_TYPE = 'webhook.ping';

export async function probeEndpoint(
  deps: Pick<AppDeps, 'config'>,
  subscription: { id: string; endpoint_url: string; signing_secret: string },
  /** Tests: extra trusted CAs, an injected resolver, a shorter timeout. */
  options: Pick<TransportOptions, 'ca' | 'lookup'> & { timeoutMs?: number } = {},
): Promise<{ ok: boolean; description: string }> {
  const timeoutMs = options.timeoutMs ?? PROBE_TIMEOUT_MS;
  const agent = createDeliveryAgent({
    timeoutMs,
    allowPrivateTargets: deps.config.webhookAllowPrivateTargets,
    caFile: deps.config.webhookCaFile,
    ca: options.ca,
    lookup: options.lookup,
  });
  try {
    const publicId = newEventPublicId();
    const body = buildPayload(publicId, PROBE_EVENT_TYPE, new Date(), { subscription_id: subscription.id });
    const headers = webhookHeaders({
      key: signingKey(subscription.signing_secret),
      eventPublicId: publicId,
      body,
      timestamp: Math.floor(Date.now() / 1000),
      deliveryId: newDeliveryHeaderId(),
    });
    const result = await sendWebhook(agent, { url: subscription.endpoint_url, headers, body, timeoutMs });
    return {
      ok: result.kind === 'response' && result.statusCode >= 200 && result.statusCode < 300,
      description: describe(result),
    };
  } finally {
    await agent.destroy().catch(() => {});
  }
}

function describe(result: SendResult): string {
  if (result.kind === 'response') {
    const success = result.statusCode >= 200 && result.statusCode < 300;
    return success
      ? `the endpoint answered HTTP ${result.statusCode}`
      : `the endpoint answered HTTP ${result.statusCode}${result.statusCode >= 300 && result.statusCode < 400 ? ' (redirects are not followed)' : ''}`;
  }
  if (result.kind === 'timeout') return `the endpoint did not answer within ${result.latencyMs / 1000} s`;
  return `the endpoint could not be reached: ${result.reason}`;
}
