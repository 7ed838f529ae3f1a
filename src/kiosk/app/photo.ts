/**
 * A child's photo at the door, when the roster carries no thumbnail for it. The roster carries
 * `photoRef` only while the child has an active image consent (0014, 0018), and the thumbnail of a
 * stored photo as a document of its own (0033, drawn by `imageFromBytes`). A reference without one is
 * shown only when it is itself an address on this origin: the CSP allows no other image source, and
 * a request elsewhere would tell a third party which child is being collected. A bare storage key
 * shows nothing. Pure.
 */
export const photoUrl = (photoRef: string | null, origin: string): string | undefined => {
  if (photoRef === null) return undefined;
  const ref = photoRef.trim();
  // A bare key ("photos/ana.jpg") is not an address: resolving it against the page would guess one.
  if (!ref.startsWith('/') && !/^https?:/i.test(ref)) return undefined;
  let url: URL;
  try {
    url = new URL(ref, `${origin}/`);
  } catch {
    return undefined;
  }
  return url.origin === origin ? url.href : undefined;
};
