/**
 * The family pass on a child's page (decision 0049): the card as the server prints it, drawn from its
 * PNG without an image address (the CSP allows none but this origin's), printed alone, downloaded as
 * SVG or PNG; and, for an ADMIN, the replacement of a lost card (the old one stops working on every
 * tablet at its next roster pull).
 */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { h, imageFromBytes, replaceChildren } from '../../../kiosk/app/dom.js';
import { mayReach } from '../../../rules/authorization.js';
import { apiBytes, apiCall, currentAuth, errorMessage } from '../api.js';
import type { Shell } from '../shell.js';
import { download, sayFailure } from './adminKit.js';
import type { AdminT } from './adminText.js';

const ErrorCode = t.type({ error: t.type({ code: t.string }) });
const codeOf = (json: unknown): string | undefined => {
  const d = ErrorCode.decode(json);
  return E.isRight(d) ? d.right.error.code : undefined;
};

const cardPath = (studentId: string, format: 'svg' | 'png') =>
  `/api/v1/students/${encodeURIComponent(studentId)}/family-pass${format === 'png' ? '?format=png' : ''}`;

export const familyPassSection = async (
  shell: Shell,
  at: AdminT,
  into: HTMLElement,
  studentId: string,
): Promise<void> => {
  const card = await apiBytes('GET', cardPath(studentId, 'png'));
  if (card.status === 403) return replaceChildren(into, h('p', {}, at('common.forbidden')));
  if (card.status === 409)
    return replaceChildren(
      into,
      h('p', {}, codeOf(card.json) === 'NO_FAMILY' ? at('pass.noFamily') : errorMessage(card)),
    );
  if (card.status !== 200 || card.bytes === undefined) return sayFailure(shell, at, card);
  const png = card.bytes;
  const save = (format: 'svg' | 'png') => async () => {
    const a = format === 'png' ? card : await apiBytes('GET', cardPath(studentId, format));
    if (a.status !== 200 || a.bytes === undefined) return sayFailure(shell, at, a);
    download(`cartao-familia.${format}`, a.bytes, format === 'png' ? 'image/png' : 'image/svg+xml');
  };
  const print = () => {
    // The print styles show the card alone while this is set.
    document.body.dataset.printing = 'family-pass';
    window.print();
    delete document.body.dataset.printing;
  };
  const user = currentAuth()?.user;
  const replace = async () => {
    if (!window.confirm(at('pass.replaceConfirm'))) return;
    const a = await apiCall('POST', `/api/v1/students/${encodeURIComponent(studentId)}/family-pass/revoke`);
    if (a.status !== 200) return sayFailure(shell, at, a);
    shell.say(at('pass.replaced'));
    await familyPassSection(shell, at, into, studentId);
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
