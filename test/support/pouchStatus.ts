/** The HTTP status a store write answered: 200 when it went through, the error's status when refused. */
export const statusOf = async (p: Promise<unknown>): Promise<number | undefined> => {
  try {
    await p;
    return 200;
  } catch (e) {
    return typeof e === 'object' && e !== null && 'status' in e && typeof e.status === 'number'
      ? e.status
      : undefined;
  }
};
