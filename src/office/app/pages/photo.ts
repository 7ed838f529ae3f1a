/**
 * A child's photo and image consents (`#/children/<id>/photo`, decisions 0033 and 0034): the consent
 * section first, since a photo is stored only under an active consent; then the photo as the server
 * stores it (re-encoded, read back with the session's token and drawn without an image address, so
 * the CSP holds) and the upload, offered only while a consent is active.
 */
import * as E from 'fp-ts/lib/Either.js';
import { field, h, imageFromBytes, replaceChildren } from '../../../client/dom.js';
import { onAnswer } from '../calls.js';
import { api } from '../client.js';
import type { Shell } from '../shell.js';
import { consentSection } from './consents.js';

const MAX_BYTES = 5 * 1024 * 1024;
const ACCEPTED = ['image/jpeg', 'image/png', 'image/webp'];

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

  const showPhoto = async (): Promise<void> => {
    // None stored, none allowed, or not reachable: the page says there is no photo to show.
    const photo = await api.getStudentPhoto({ params: { studentId } });
    if (E.isRight(photo)) {
      replaceChildren(
        preview,
        imageFromBytes(photo.right.bytes, 'image/jpeg', tr('photo.alt', { name }), {
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
            await onAnswer(
              shell,
              api.putStudentPhoto({ params: { studentId }, body: { bytes: chosen, type } }),
              async () => {
                shell.say(tr('photo.uploaded'));
                file.value = '';
                await showPhoto();
              },
            );
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
  void onAnswer(shell, api.getStudent({ params: { studentId } }), (student) => {
    name = student.displayName;
    heading.textContent = tr('photo.title', { name });
    shell.main.append(
      consentSection(shell, studentId, student.guardianName ?? '', consentChanged),
      photoSection,
    );
  });
};
