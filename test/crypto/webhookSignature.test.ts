import { expect } from 'chai';
import { newWebhookId, signWebhook, webhookKey } from '../../src/crypto/webhookSignature.js';

// The Standard Webhooks specification's published vector, which its reference libraries test against.
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

describe('webhook signatures (Standard Webhooks)', () => {
  const key = webhookKey(VECTOR.secret);

  it("signs the specification's test vector exactly", () => {
    if (key === undefined) throw new Error('the vector secret must be accepted');
    expect(signWebhook(key, VECTOR.id, VECTOR.timestamp, VECTOR.body)).to.equal(VECTOR.signature);
  });

  it('keys the HMAC with the decoded bytes after whsec_, not with the text', () => {
    expect(key).to.deep.equal(new Uint8Array(Buffer.from('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'base64')));
    expect(webhookKey('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')).to.equal(undefined);
  });

  const changed: ReadonlyArray<[string, string, number, string]> = [
    ['another id', 'msg_p5jXN8AQM9LWM0D4loKWxJel', VECTOR.timestamp, VECTOR.body],
    ['another timestamp', VECTOR.id, VECTOR.timestamp + 1, VECTOR.body],
    ['another body', VECTOR.id, VECTOR.timestamp, '{"test": 2432232315}'],
  ];
  for (const [what, id, timestamp, body] of changed) {
    it(`a message with ${what} has another signature`, () => {
      if (key === undefined) throw new Error('the vector secret must be accepted');
      expect(signWebhook(key, id, timestamp, body)).to.not.equal(VECTOR.signature);
    });
  }

  it('names each message with a fresh msg_ id', () => {
    const a = newWebhookId();
    expect(a).to.match(/^msg_[0-9a-f]{32}$/);
    expect(newWebhookId()).to.not.equal(a);
  });
});
