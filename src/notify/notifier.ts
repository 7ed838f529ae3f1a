/**
 * Sending one-time codes to an adult's phone. The development notifier writes the code to the log (the
 * phone appears only as its last 4 digits); the webhook notifier POSTs to an SMS gateway of the
 * deployment's choice. Chosen by NOTIFY_WEBHOOK_URL.
 */
import type { Logger } from 'pino';

export interface Notifier {
  sendCode(phone: string, code: string, purpose: string): Promise<void>;
}

export const devNotifier = (logger: Logger): Notifier => ({
  async sendCode(phone, code, purpose) {
    logger.info(
      { phoneSuffix: phone.replace(/\D/g, '').slice(-4), code, purpose },
      'development notifier: one-time code',
    );
  },
});

export const webhookNotifier = (url: string, timeoutMs = 5000): Notifier => ({
  async sendCode(phone, code, purpose) {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ to: phone, message: `Chamada: seu código é ${code}`, purpose }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!res.ok) throw new Error(`the notification webhook answered ${res.status}`);
  },
});
