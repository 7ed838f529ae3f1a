/**
 * The one way the kiosk and the office build DOM: elements with text content and properties, never
 * HTML strings, so a child's name can never become markup, and nothing needs an inline script or style
 * (CSP, 0020).
 */
export type Child = Node | string | null | undefined | false;

export interface Props {
  readonly className?: string;
  readonly attrs?: Readonly<Record<string, string>>;
  readonly onClick?: (event: MouseEvent) => void;
  readonly onInput?: (event: Event) => void;
  readonly onSubmit?: (event: SubmitEvent) => void;
}

export const h = <K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: ReadonlyArray<Child>
): HTMLElementTagNameMap[K] => {
  const el = document.createElement(tag);
  if (props.className !== undefined) el.className = props.className;
  for (const [name, value] of Object.entries(props.attrs ?? {})) el.setAttribute(name, value);
  // Widened so the listener overloads of HTMLElementEventMap apply.
  const node: HTMLElement = el;
  if (props.onClick !== undefined) node.addEventListener('click', props.onClick);
  if (props.onInput !== undefined) node.addEventListener('input', props.onInput);
  if (props.onSubmit !== undefined) node.addEventListener('submit', props.onSubmit);
  append(el, children);
  return el;
};

export const append = (parent: Node, children: ReadonlyArray<Child>): void => {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
  }
};

export const replaceChildren = (parent: Element, ...children: ReadonlyArray<Child>): void => {
  parent.replaceChildren();
  append(parent, children);
};

/** A labelled input: the label wraps it, so tapping the words focuses the field. */
export const field = (label: string, input: HTMLInputElement | HTMLTextAreaElement): HTMLLabelElement =>
  h('label', { className: 'field' }, h('span', { className: 'field-label' }, label), input);

/**
 * A form's submit handler: runs `attempt` one at a time (a double tap records nothing twice), the
 * confirm button disabled meanwhile, and shows in `message` what stopped it, if anything.
 */
export const submitOnce = (
  confirm: HTMLButtonElement,
  message: HTMLElement,
  attempt: () => Promise<string | undefined>,
  onProblem: () => void = () => undefined,
): ((event: SubmitEvent) => Promise<void>) => {
  let busy = false;
  return async (event) => {
    event.preventDefault();
    if (busy) return;
    busy = true;
    confirm.disabled = true;
    try {
      const problem = await attempt();
      if (problem !== undefined) {
        message.textContent = problem;
        onProblem();
      }
    } finally {
      busy = false;
      confirm.disabled = false;
    }
  };
};

/** A big quiet button that leaves a form without submitting it (back, cancel). */
export const leaveButton = (label: string, onClick: () => void): HTMLButtonElement =>
  h('button', { className: 'quiet big', attrs: { type: 'button' }, onClick }, label);

/**
 * An image drawn from bytes the page already holds (a photo thumbnail from the roster, a photo fetched
 * with the session's token). The Content-Security-Policy allows images from this origin only, which a
 * `data:` or `blob:` address is not; `createImageBitmap` decodes a Blob without any address, and a
 * canvas shows it, so the policy stays as strict as the contract asks. The canvas is labelled as an
 * image for screen readers; it stays empty (and is removed) when the bytes do not decode.
 */
export const imageFromBytes = (
  bytes: Uint8Array<ArrayBuffer>,
  type: string,
  label: string,
  props: { readonly className?: string; readonly attrs?: Readonly<Record<string, string>> } = {},
): HTMLCanvasElement => {
  const canvas = h('canvas', {
    ...(props.className === undefined ? {} : { className: props.className }),
    attrs: { role: 'img', 'aria-label': label, ...(props.attrs ?? {}) },
  });
  createImageBitmap(new Blob([bytes], { type })).then(
    (bitmap) => {
      canvas.width = bitmap.width;
      canvas.height = bitmap.height;
      canvas.getContext('2d')?.drawImage(bitmap, 0, 0);
      bitmap.close();
      canvas.dataset.loaded = 'true';
    },
    () => canvas.remove(),
  );
  return canvas;
};

/** base64 (not base64url) to bytes, as a roster photo carries them. */
export const base64Bytes = (text: string): Uint8Array<ArrayBuffer> => {
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) out[i] = binary.charCodeAt(i);
  return out;
};

/**
 * Hands text or bytes to the browser as a file: a Blob behind an `<a download>` clicked once. A blob: URL is a
 * navigation, not a script or style, so the CSP holds; it is released a minute later, long after the
 * browser has started the download.
 */
export const download = (fileName: string, content: string | Uint8Array<ArrayBuffer>, type: string): void => {
  const url = URL.createObjectURL(new Blob([content], { type }));
  const link = h('a', { className: 'hidden', attrs: { href: url, download: fileName } });
  document.body.append(link);
  link.click();
  link.remove();
  window.setTimeout(() => URL.revokeObjectURL(url), 60_000);
};
