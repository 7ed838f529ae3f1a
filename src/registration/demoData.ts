/**
 * The development seed's demo data: a nucleus, two classes, today's sessions and twenty students
 * with guardians, so a newcomer can try every flow. Names are invented; phones use the reserved
 * 555 prefix style so they reach nobody.
 */
import type { Principal } from '../domain/principal.js';
import type { ClassStore } from '../store/classes.js';
import type { StudentService } from './studentService.js';

const FIRST = ['João', 'Maria', 'Ana', 'Pedro', 'Lucas', 'Júlia', 'Gabriel', 'Beatriz', 'Rafael', 'Laís'];
const FAMILY = ['Silva', 'Souza', 'Oliveira', 'Conceição'];
const GUARDIANS = ['Cláudia', 'Marcos', 'Fernanda', 'Paulo', 'Simone'];

export interface DemoData {
  readonly nucleusId: string;
  readonly classIds: ReadonlyArray<string>;
  readonly sessionIds: ReadonlyArray<string>;
  readonly students: number;
}

export const seedDemoData = async (
  classes: ClassStore,
  students: StudentService,
  admin: Principal,
  now: Date,
): Promise<DemoData> => {
  const at = now.toISOString();
  const today = at.slice(0, 10);
  const nucleus = await classes.createNucleus({ name: 'Núcleo Centro', createdAt: at, updatedAt: at });
  // The seed runs on an empty store only, so the name cannot be taken.
  if (nucleus === 'NAME_TAKEN') throw new Error('the demo nucleus exists already');
  const groups = [
    await classes.createClass({
      name: 'Turma Sementinhas (4–6 anos)',
      nucleusId: nucleus.nucleusId,
      createdAt: at,
      updatedAt: at,
    }),
    await classes.createClass({
      name: 'Turma Exploradores (7–10 anos)',
      nucleusId: nucleus.nucleusId,
      createdAt: at,
      updatedAt: at,
    }),
  ];
  const sessions = [];
  for (const group of groups) {
    sessions.push(
      await classes.createSession({
        classId: group.classId,
        nucleusId: nucleus.nucleusId,
        date: today,
        title: 'Encontro de hoje',
        startsAt: `${today}T12:00:00.000Z`,
        endsAt: `${today}T14:00:00.000Z`,
        createdAt: at,
        updatedAt: at,
      }),
    );
  }
  const actor = { principal: admin, deviceId: null };
  let created = 0;
  for (let i = 0; i < 20; i += 1) {
    const group = groups[i % groups.length];
    if (group === undefined) continue;
    const result = await students.create(actor, {
      displayName: `${FIRST[i % FIRST.length]} ${FAMILY[i % FAMILY.length]}`,
      guardianName: `${GUARDIANS[i % GUARDIANS.length]} ${FAMILY[i % FAMILY.length]}`,
      phones: [
        {
          number: `+55 11 5555-${String(1000 + i).padStart(4, '0')}`,
          qualifier: i % 2 === 0 ? 'mãe' : 'pai',
        },
      ],
      classId: group.classId,
      ...(i % 5 === 0 ? { allergies: 'Amendoim' } : {}),
    });
    if (result._tag === 'Right') created += 1;
  }
  return {
    nucleusId: nucleus.nucleusId,
    classIds: groups.map((g) => g.classId),
    sessionIds: sessions.map((s) => s.sessionId),
    students: created,
  };
};

export interface DemoDataService {
  /** Writes the demo data as `admin`, dated today. */
  seed(admin: Principal): Promise<DemoData>;
}

export const demoDataService = (deps: {
  readonly classes: ClassStore;
  readonly students: StudentService;
  readonly clock: () => Date;
}): DemoDataService => ({
  seed: (admin) => seedDemoData(deps.classes, deps.students, admin, deps.clock()),
});
