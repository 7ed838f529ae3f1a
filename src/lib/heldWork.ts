/**
 * Work put off while something holds it: an import writing its file holds the roster's full passes
 * and the student views' refreshes, so each runs once after the file rather than once a batch
 * (decisions 0057, 0066). `putOff` says whether work asked for now must wait, and remembers that some
 * did; the last release calls `resume` once if any did. A release called twice counts once.
 */
export interface HeldWork {
  /** Holds the work until the returned release (the last, when several hold). */
  hold(): () => void;
  /** True while held: the caller leaves its work to `resume`. */
  putOff(): boolean;
}

export const heldWork = (resume: () => void): HeldWork => {
  let holds = 0;
  let putOffMeanwhile = false;
  return {
    hold() {
      holds += 1;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        holds -= 1;
        if (holds > 0 || !putOffMeanwhile) return;
        putOffMeanwhile = false;
        resume();
      };
    },
    putOff() {
      if (holds === 0) return false;
      putOffMeanwhile = true;
      return true;
    },
  };
};
