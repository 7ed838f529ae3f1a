/**
 * What the family pass adds to the roster's full pass (decision 0049): gathering each child's
 * families and writing one family document per shared phone, with the pass hashes (an HMAC and a
 * SHA-256 per family, two more per replaced pass named). Runs the server's own functions over a
 * synthetic roll (siblings in threes, one family in five with a second number, a tenth revoked once),
 * as the full pass runs them: each phone's key once a pass, each family's hashes made again each pass
 * (decision 0075). Prints a pass's CPU time (the process's, so a busy machine moves it less than the
 * clock) and the hashes' share of it.
 *
 *   npx tsx bench/familyPasses.ts [students=10000]
 */
import { randomBytes } from 'node:crypto';
import { rosterPassHashes } from '../src/crypto/familyPass.js';
import { familyMembersOf, type RosterInput, rosterFamilyDocs } from '../src/rules/roster.js';
import { familyKeyOf, familyPassesOf } from '../src/sync/rosterInput.js';
import { median } from './stats.js';

const students = Number(process.argv[2] ?? 10_000);
const secret = new Uint8Array(randomBytes(32));
const roll: Array<RosterInput['students'][number]> = [];
const adults = new Map<string, RosterInput['adults'] extends ReadonlyMap<string, infer A> ? A : never>();
for (let i = 0; i < students; i += 1) {
  const studentId = `s${String(i).padStart(7, '0')}`;
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
