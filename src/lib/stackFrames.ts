/**
 * Where the error was thrown, without what it said: a stack's first line repeats the message (which
 * may quote a name or a document), so only the frame lines are kept.
 */
export const stackFrames = (err: unknown): string | undefined => {
  if (!(err instanceof Error) || typeof err.stack !== 'string') return undefined;
  // The head is `String(err)` (name and message); cut it off whole, since a message may span lines.
  const head = String(err);
  const body = err.stack.startsWith(head) ? err.stack.slice(head.length) : err.stack;
  return body
    .split('\n')
    .filter((line) => /^\s+at /.test(line))
    .join('\n');
};
