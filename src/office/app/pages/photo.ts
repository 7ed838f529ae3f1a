/**
 * A child's photo and image consents (`#/children/<id>/photo`, decisions 0033 and 0034): the consent
 * section first, since a photo is stored only under an active consent; then the photo as the server
 * stores it (re-encoded, read back with the session's token and drawn without an image address, so
 * the CSP holds) and the upload, offered only while a consent is active.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { field, h, imageFromBytes, replaceChildren } from '../../../client/dom.js';
import { apiBytes, apiCall, errorMessage } from '../api.js';
import type { Shell } from '../shell.js';
import { consentSection } from './consents.js';

const MAX_BYTES = 5 * 1024 * 1024;
const ACCEPTED = ['image/jpeg', 'image/png', 'image/webp'];

const StudentC = t.type({
  studentId: t.string,
  displayName: t.string,
  guardianName: t.union([t.string, t.undefined]),
  photoRef: t.union([t.string, t.null, t.undefined]),
});

export const photoPage = (shell: Shell, studentId: string): void => {
  const { t: tr } = shell;
  const heading = h('h1', {});
  const preview = h('div', { className: 'photo-preview', attrs: { 'data-test': 'photo-preview' } });
  const uploadSlot = h('div', {});
  const photoSection = h(
    'section',
    { attrs: { 'aria-labelledby': 'photo-heading' } },
    h('h2', { attrs: { id: 'photo-heading' } }, tr('photo.section')),
    preview,
    uploadSlot,
  );
  let name = '';
  const fail = (a: { status: number; json: unknown }) =>
    shell.say(
      a.status === 0 ? tr('error.network') : tr('error.generic', { message: errorMessage(a) }),
      'error',
    );

  const showPhoto = async (): Promise<void> => {
    const a = await apiBytes('GET', `/api/v1/students/${studentId}/photo`);
    if (a.status === 200 && a.bytes !== undefined) {
      replaceChildren(
        preview,
        imageFromBytes(a.bytes, 'image/jpeg', tr('photo.alt', { name }), {
          className: 'child-photo',
          attrs: { 'data-test': 'office-photo' },
        }),
      );
    } else replaceChildren(preview, h('p', {}, tr('photo.none')));
  };

  const uploadForm = (): HTMLElement => {
    const file = h('input', { attrs: { type: 'file', accept: ACCEPTED.join(','), required: '' } });
    return h(
      'form',
      {
        onSubmit: (e) => {
          e.preventDefault();
          const chosen = file.files?.[0];
          if (chosen === undefined) return;
          if (chosen.size > MAX_BYTES) return shell.say(tr('photo.tooLarge'), 'error');
          void (async () => {
            // The browser names the type from the file; an unknown one is sent as JPEG and the server
            // reads the bytes for what they are (it refuses what is no JPEG, PNG or WebP).
            const type = ACCEPTED.includes(chosen.type) ? chosen.type : 'image/jpeg';
            const a = await apiBytes('PUT', `/api/v1/students/${studentId}/photo`, { body: chosen, type });
            if (a.status !== 200) return fail(a);
            shell.say(tr('photo.uploaded'));
            file.value = '';
            await showPhoto();
          })();
        },
      },
      field(tr('photo.file'), file),
      h('button', { attrs: { type: 'submit' } }, tr('photo.upload')),
    );
  };

  const consentChanged = ({ active }: { active: boolean }) => {
    replaceChildren(uploadSlot, active ? uploadForm() : h('p', {}, tr('photo.needsConsent')));
    void showPhoto();
  };

  replaceChildren(
    shell.main,
    heading,
    h('p', {}, h('a', { attrs: { href: `#/children/${studentId}` } }, tr('photo.back'))),
  );
  void (async () => {
    const a = await apiCall('GET', `/api/v1/students/${studentId}`);
    const student = StudentC.decode(a.json);
    if (a.status !== 200 || E.isLeft(student)) return fail(a);
    name = student.right.displayName;
    heading.textContent = tr('photo.title', { name });
    shell.main.append(
      consentSection(shell, studentId, student.right.guardianName ?? '', consentChanged),
      photoSection,
    );
  })();
};
