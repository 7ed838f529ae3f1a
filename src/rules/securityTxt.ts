/**
 * RFC 9116 security.txt. `Expires` is one year after the moment the file is served (the product's
 * reading of "one year from issue"), so the file can never be served expired.
 */
export const securityTxtExpiry = (now: Date): Date => {
  const expires = new Date(now.getTime());
  expires.setUTCFullYear(expires.getUTCFullYear() + 1);
  // A Feb 29 issue would roll over to Mar 1; keep the expiry inside the year instead.
  if (expires.getUTCMonth() !== now.getUTCMonth()) expires.setUTCDate(0);
  expires.setUTCMilliseconds(0);
  return expires;
};

export const renderSecurityTxt = (contacts: ReadonlyArray<string>, now: Date): string =>
  [
    ...contacts.map((c) => `Contact: ${c}`),
    `Expires: ${securityTxtExpiry(now).toISOString().replace('.000Z', 'Z')}`,
    'Preferred-Languages: pt-BR, en',
    '',
  ].join('\n');
