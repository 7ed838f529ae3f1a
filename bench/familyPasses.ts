/**
 * What the family pass adds to the roster's full pass (decision 0049): gathering each child's
 * families and writing one family document per shared phone, with the pass hashes (an HMAC and a
 * SHA-256 per family, two more per replaced pass named). Runs the server's own functions over a
 * synthetic roll (siblings in threes, one family in five with a second number, a tenth revoked once),
 * as the full pass runs them: each phone's key once a pass, each family's hashes made again each pass
 * (decision 0075). Prints a pass's CPU time (the process's, so a busy machine moves it less than the
 * clock) and the hashes' share of it; and the memory the full pass holds for every child until its
 * families' pages (decision 0076): the members packed, a page's phone keys at a time, against the
 * members as the rules give them with every phone's key held for the pass (as before 0076), both
 * gathered from pages of records parsed from JSON as the store gives them, in this run.
 *
 *   npx tsx bench/familyPasses.ts [students=10000]
 */
import { randomBytes } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { rosterPassHashes } from '../src/crypto/familyPass.js';
import { familyMembersOf, type RosterInput, rosterFamilyDocs } from '../src/rules/roster.js';
import { familyKeyOf, familyPassesOf, packMember, ROSTER_PAGE } from '../src/sync/rosterInput.js';
import { median } from './stats.js';

const students = Number(process.argv[2] ?? 10_000);
const secret = new Uint8Array(randomBytes(32));
const roll: Array<RosterInput['students'][number]> = [];
const adults = new Map<string, RosterInput['adults'] extends ReadonlyMap<string, infer A> ? A : never>();
for (let i = 0; i < students; i += 1) {
  // Shaped as the store's ids are (UUIDs), so the memory held per member is a real one's.
  const studentId = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
  const family = Math.floor(i / 3);
  const phones = [
    `+55 11 9${String(family).padStart(8, '0')}`,
    ...(family % 5 === 0 ? [`11 3${String(family).padStart(7, '0')}`] : []),
  ];
  roll.push({
    studentId,
    displayName: `Criança ${i}`,
    classId: 'c1',
    status: 'ACTIVE',
    photoRef: null,
    allergies: null,
    specialNeeds: null,
    visitor: false,
    birthDate: null,
    phones,
  });
  adults.set(studentId, [{ name: `Responsável ${family}`, level: 'N1', relationship: 'guardian', phones }]);
}
const generations = new Map<string, number>();
// The student documents compute every phone's key first; the family documents find them held.
const keys = new Map<string, string>();
const keyOf = familyKeyOf(secret);
const familyKey = (d: string) => keys.get(d) ?? keys.set(d, keyOf(d)).get(d) ?? '';
for (const m of familyMembersOf({ students: roll, adults }, familyKey))
  if (m.studentId.endsWith('0')) generations.set(m.familyKey, 1);
/** What the family pass adds to one full pass: the members gathered, the documents and their hashes. */
const pass = () =>
  rosterFamilyDocs(
    familyMembersOf({ students: roll, adults }, familyKey),
    familyPassesOf(secret, generations),
  );
const cpuMs = (f: () => unknown): number => {
  const started = process.cpuUsage();
  f();
  const used = process.cpuUsage(started);
  return (used.user + used.system) / 1000;
};
const familyKeys = [
  ...new Set(familyMembersOf({ students: roll, adults }, familyKey).map((m) => m.familyKey)),
];
const passes: number[] = [];
const hashes: number[] = [];
for (let run = 0; run < 5; run += 1) {
  passes.push(cpuMs(pass));
  hashes.push(cpuMs(() => familyKeys.map((k) => rosterPassHashes(secret, k, generations.get(k) ?? 0))));
}
const docs = pass();
const bytes = Buffer.byteLength(JSON.stringify(docs));
console.log(
  `${students} students, ${docs.length - 1} families: ${median(passes).toFixed(0)} ms of CPU a pass, ` +
    `of which the pass hashes ${median(hashes).toFixed(0)} ms (${((median(hashes) * 1000) / familyKeys.length).toFixed(1)} µs a family; medians of 5), ` +
    `${(bytes / 1024 / 1024).toFixed(1)} MiB of family documents as JSON`,
);

// What the heap holds is read after full collections: the flag set here, so a plain `tsx` runs it.
setFlagsFromString('--expose-gc');
const exposed: unknown = runInNewContext('gc');
if (typeof exposed !== 'function') throw new Error('no gc exposed');
const collect = (): void => {
  Reflect.apply(exposed, undefined, []);
  Reflect.apply(exposed, undefined, []);
};
/** The heap `gather`'s result holds, in MB: the heap with it, less the heap once it is let go. */
const heldMb = (gather: () => ReadonlyArray<unknown>): number => {
  const holder: { held: ReadonlyArray<unknown> } = { held: gather() };
  collect();
  const withIt = process.memoryUsage().heapUsed;
  if (holder.held.length === 0) throw new Error('nothing gathered');
  holder.held = [];
  collect();
  return (withIt - process.memoryUsage().heapUsed) / 2 ** 20;
};
/** The roll a page at a time, each page's records and adults parsed afresh, as the store reads them. */
const eachPage = (visit: (page: typeof roll, pageAdults: typeof adults) => void): void => {
  for (let from = 0; from < roll.length; from += ROSTER_PAGE) {
    const page: typeof roll = JSON.parse(JSON.stringify(roll.slice(from, from + ROSTER_PAGE)));
    const pageAdults: typeof adults = new Map(
      JSON.parse(JSON.stringify(page.map((s) => [s.studentId, adults.get(s.studentId) ?? []]))),
    );
    visit(page, pageAdults);
  }
};
const asObjects = heldMb(() => {
  const passKeys = new Map<string, string>();
  const key = (d: string) => passKeys.get(d) ?? passKeys.set(d, keyOf(d)).get(d) ?? '';
  const members: unknown[] = [passKeys];
  eachPage((page, pageAdults) => {
    for (const m of familyMembersOf({ students: page, adults: pageAdults }, key)) members.push(m);
  });
  return members;
});
const packed = heldMb(() => {
  const members: string[] = [];
  eachPage((page, pageAdults) => {
    const pageKeys = new Map<string, string>();
    const key = (d: string) => pageKeys.get(d) ?? pageKeys.set(d, keyOf(d)).get(d) ?? '';
    for (const m of familyMembersOf({ students: page, adults: pageAdults }, key)) members.push(packMember(m));
  });
  return members;
});
const memberCount = familyMembersOf({ students: roll, adults }, familyKey).length;
console.log(
  `the members held until the families' pages, ${memberCount} of them: packed ${packed.toFixed(1)} MB ` +
    `(${((packed * 2 ** 20) / memberCount).toFixed(0)} bytes a member), as objects with the pass's phone keys ` +
    `${asObjects.toFixed(1)} MB (${((asObjects * 2 ** 20) / memberCount).toFixed(0)} bytes); ${(packed / asObjects).toFixed(2)} of it`,
);
