/**
 * Student records follow their field events: once the pipeline has decided a field's aspect (an
 * ADMIN's correction over a concurrent one from the door, say), the record and the in-memory directory
 * take the standing value. A field that no event has set keeps the value the student was created with.
 */
import { isStudentWritableField } from '../domain/student.js';
import type { AspectProjection } from '../rules/projections.js';
import type { StudentStore } from '../store/students.js';
import type { DirectoryPort } from '../sync/directoryPort.js';

export const studentWriteThrough =
  (deps: {
    readonly students: StudentStore;
    readonly directory: DirectoryPort;
    readonly clock: () => Date;
    readonly onUnfit?: (aspect: string) => void;
  }) =>
  async (p: AspectProjection): Promise<void> => {
    const state = p.state;
    if (state?.kind !== 'student') return;
    if (!isStudentWritableField(state.field)) {
      deps.onUnfit?.(p.aspect);
      return;
    }
    const applied = await deps.students.applyField(
      state.studentId,
      state.field,
      state.value,
      deps.clock().toISOString(),
    );
    if (applied === undefined) deps.onUnfit?.(p.aspect);
    else if (applied !== 'UNCHANGED') deps.directory.upsertStudent(applied);
  };
