/**
 * The one way the kiosk builds DOM: elements with text content and properties, never HTML strings, so
 * a child's name can never become markup, and nothing needs an inline script or style (CSP, 0020).
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
