/**
 * A child's photo at the door. The roster carries `photoRef` only while the child has an active image
 * consent (0014, 0018), so consent is settled before the tablet sees the reference. The service has no
 * photo endpoint yet (photo retrieval is an open item of the contract), so a reference is shown only
 * when it is itself an address on this origin: the CSP allows no other image source, and a request
 * elsewhere would tell a third party which child is being collected. A bare storage key shows nothing.
 * Pure.
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
