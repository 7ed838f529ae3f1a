/**
 * A page's calls in one shape: the call (an endpoint function of `client.ts`), then the answer drawn,
 * or the failure said on the message line in the office's words: no network, a role the server
 * refused (when the page has words for it), or the server's own message.
 */
import * as E from 'fp-ts/lib/Either.js';
import { type Failure, failureMessage, statusOf } from '../../client/transport.js';
import type { Shell } from './shell.js';

export interface FailureWords {
  /** What a 403 is said as; the server's own message otherwise. */
  readonly forbidden?: string;
  /** The page's own words for a refusal it knows (undefined: the server's message). */
  readonly refusal?: (f: Failure) => string | undefined;
}

export const failureText = (shell: Shell, f: Failure, words: FailureWords = {}): string =>
  f.kind === 'network'
    ? shell.t('error.network')
    : words.forbidden !== undefined && statusOf(f) === 403
      ? words.forbidden
      : (words.refusal?.(f) ?? shell.t('error.generic', { message: failureMessage(f) }));

export const sayFailure = (shell: Shell, f: Failure, words: FailureWords = {}): void =>
  shell.say(failureText(shell, f, words), 'error');

/**
 * Waits for `call`; draws its answer, or says why there is none. Resolves true once drawn, so a form
 * can tell whether to clear itself.
 */
export const onAnswer = async <A>(
  shell: Shell,
  call: Promise<E.Either<Failure, A>>,
  draw: (answer: A) => unknown,
  words: FailureWords = {},
): Promise<boolean> => {
  const answer = await call;
  if (E.isLeft(answer)) {
    sayFailure(shell, answer.left, words);
    return false;
  }
  await draw(answer.right);
  return true;
};
