/** Standard Webhooks 1.0 signatures (docs/webhooks.md, "Signature"). */
import { createHmac, randomBytes } from 'node:crypto';

/** A new secret in Standard Webhooks' form: `whsec_` and the base64 of 24 random bytes. */
export function newSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** `v1,<base64 HMAC-SHA256 over id.timestamp.body>`, one per secret, space-separated. */
export function signature(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
      return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
    })
    .join(' ');
}
