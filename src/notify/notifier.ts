/**
 * Sending one-time codes and pages (decision 0037) to an adult's phone. The development notifier writes
 * them to the log (the phone appears only as its last 4 digits); the webhook notifier POSTs to an SMS
 * gateway of the deployment's choice. Chosen by NOTIFY_WEBHOOK_URL.
 */
import type { Logger } from 'pino';

export interface Notifier {
  sendCode(phone: string, code: string, purpose: string): Promise<void>;
  /** A text composed by the caller (a page to a guardian); rejects when the gateway refuses it. */
  sendMessage(phone: string, message: string, purpose: string): Promise<void>;
}

export const devNotifier = (logger: Logger): Notifier => ({
  async sendCode(phone, code, purpose) {
    logger.info(
      { phoneSuffix: phone.replace(/\D/g, '').slice(-4), code, purpose },
      'development notifier: one-time code',
    );
  },
  async sendMessage(phone, message, purpose) {
    logger.info(
      { phoneSuffix: phone.replace(/\D/g, '').slice(-4), message, purpose },
      'development notifier: message',
    );
  },
});

export const webhookNotifier = (url: string, timeoutMs = 5000): Notifier => {
  const post = async (to: string, message: string, purpose: string): Promise<void> => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ to, message, purpose }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    // The body is drained so the connection is reused; what the gateway says is not needed.
    await res.arrayBuffer().catch(() => undefined);
    if (!res.ok) throw new Error(`the notification webhook answered ${res.status}`);
  };
  return {
    sendCode: (phone, code, purpose) => post(phone, `Chamada: seu código é ${code}`, purpose),
    sendMessage: post,
  };
};
