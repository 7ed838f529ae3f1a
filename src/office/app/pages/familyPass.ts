/**
 * The family pass on a child's page (decision 0049): the card as the server prints it, drawn from its
 * PNG without an image address (the CSP allows none but this origin's), printed alone, downloaded as
 * SVG or PNG; and, for an ADMIN, the replacement of a lost card (the old one stops working on every
 * tablet at its next roster pull).
 */
import * as E from 'fp-ts/lib/Either.js';
import { download, h, imageFromBytes, replaceChildren } from '../../../client/dom.js';
import { failureMessage, statusOf } from '../../../client/transport.js';
import { mayReach } from '../../../rules/authorization.js';
import { onAnswer, sayFailure } from '../calls.js';
import { api, transport } from '../client.js';
import type { Shell } from '../shell.js';
import { adminWords } from './adminKit.js';
import type { AdminT } from './adminText.js';

export const familyPassSection = async (
  shell: Shell,
  at: AdminT,
  into: HTMLElement,
  studentId: string,
): Promise<void> => {
  const params = { studentId };
  const card = await api.getFamilyPass({ params, query: { format: 'png' } });
  if (E.isLeft(card)) {
    const f = card.left;
    if (statusOf(f) === 403) return replaceChildren(into, h('p', {}, at('common.forbidden')));
    if (statusOf(f) === 409)
      return replaceChildren(
        into,
        h(
          'p',
          {},
          f.kind === 'refused' && f.error.code === 'NO_FAMILY' ? at('pass.noFamily') : failureMessage(f),
        ),
      );
    return sayFailure(shell, f, adminWords(at));
  }
  const png = card.right.bytes;
  const save = (format: 'svg' | 'png') => async () => {
    const saved = format === 'png' ? card : await api.getFamilyPass({ params });
    if (E.isLeft(saved)) return sayFailure(shell, saved.left, adminWords(at));
    download(`cartao-familia.${format}`, saved.right.bytes, format === 'png' ? 'image/png' : 'image/svg+xml');
  };
  const print = () => {
    // The print styles show the card alone while this is set.
    document.body.dataset.printing = 'family-pass';
    window.print();
    delete document.body.dataset.printing;
  };
  const user = transport.current()?.user;
  const replace = async () => {
    if (!window.confirm(at('pass.replaceConfirm'))) return;
    await onAnswer(
      shell,
      api.revokeFamilyPass({ params }),
      async () => {
        shell.say(at('pass.replaced'));
        await familyPassSection(shell, at, into, studentId);
      },
      adminWords(at),
    );
  };
  replaceChildren(
    into,
    h('p', {}, at('pass.help')),
    h(
      'div',
      { className: 'family-pass-card' },
      imageFromBytes(png, 'image/png', at('pass.alt'), { attrs: { 'data-test': 'family-pass-card' } }),
    ),
    h(
      'p',
      { className: 'actions' },
      h('button', { attrs: { type: 'button' }, onClick: print }, at('pass.print')),
      h('button', { attrs: { type: 'button' }, onClick: () => void save('svg')() }, at('pass.downloadSvg')),
      h('button', { attrs: { type: 'button' }, onClick: () => void save('png')() }, at('pass.downloadPng')),
      user !== undefined && mayReach('admin', user)
        ? h(
            'button',
            {
              className: 'danger',
              attrs: { type: 'button', 'data-test': 'family-pass-replace' },
              onClick: () => void replace(),
            },
            at('pass.replace'),
          )
        : null,
    ),
  );
};
