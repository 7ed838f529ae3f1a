// What holds a V8 heap snapshot's memory (decision 0058): `node --max-old-space-size=6000
// bench/heapRetainers.mjs FILE.heapsnapshot [KIND [DEPTH]]`. Without KIND, the heap by node kind (self
// size, count); with one (`object:Object`, `string`, `concatenated string`…), those nodes grouped by
// the path of their first retainers, DEPTH levels up (outermost first), largest first. A snapshot
// comes from the service started with `--heapsnapshot-near-heap-limit=1` or `--heapsnapshot-signal`.
// Plain JavaScript: it reads a file, nothing of the service.
import { readFileSync } from 'node:fs';

const [file, kind, depthText] = process.argv.slice(2);
if (file === undefined) {
  process.stderr.write('usage: heapRetainers.mjs FILE.heapsnapshot [KIND [DEPTH]]\n');
  process.exit(2);
}
const snap = JSON.parse(readFileSync(file, 'utf8'));
const meta = snap.snapshot.meta;
const nodeFields = meta.node_fields;
const edgeFields = meta.edge_fields;
const nodeTypes = meta.node_types[0];
const edgeTypes = meta.edge_types[0];
const { nodes, edges, strings } = snap;
const NL = nodeFields.length;
const EL = edgeFields.length;
const [nType, nName, nSize, nEdges] = ['type', 'name', 'self_size', 'edge_count'].map((f) =>
  nodeFields.indexOf(f),
);
const [eType, eName, eTo] = ['type', 'name_or_index', 'to_node'].map((f) => edgeFields.indexOf(f));
const count = nodes.length / NL;

const kindOf = (n) => {
  const type = nodeTypes[nodes[n * NL + nType]];
  return type.includes('string') ? type : `${type}:${String(strings[nodes[n * NL + nName]]).slice(0, 40)}`;
};
const sizeOf = (n) => nodes[n * NL + nSize];
const show = (rows) => {
  for (const [key, [bytes, n]] of [...rows].sort((a, b) => b[1][0] - a[1][0]).slice(0, 20))
    process.stdout.write(`${(bytes / 1e6).toFixed(2).padStart(8)} MB ${String(n).padStart(9)}  ${key}\n`);
};
const add = (rows, key, bytes) => {
  const row = rows.get(key) ?? [0, 0];
  row[0] += bytes;
  row[1] += 1;
  rows.set(key, row);
};

if (kind === undefined) {
  const rows = new Map();
  for (let n = 0; n < count; n += 1) add(rows, kindOf(n), sizeOf(n));
  show(rows);
} else {
  // The first strong edge to each node stands for its retainer.
  const parent = new Int32Array(count).fill(-1);
  const parentEdge = new Int32Array(count).fill(-1);
  for (let n = 0, e = 0; n < count; n += 1)
    for (let k = nodes[n * NL + nEdges]; k > 0; k -= 1, e += EL) {
      const to = edges[e + eTo] / NL;
      const type = edgeTypes[edges[e + eType]];
      if (type !== 'weak' && type !== 'shortcut' && parent[to] === -1) {
        parent[to] = n;
        parentEdge[to] = e;
      }
    }
  const edgeName = (e) => {
    const type = edgeTypes[edges[e + eType]];
    return type === 'element' || type === 'hidden'
      ? `[${type}]`
      : `.${String(strings[edges[e + eName]]).slice(0, 30)}`;
  };
  const depth = Number(depthText ?? 3);
  const rows = new Map();
  for (let n = 0; n < count; n += 1) {
    if (kindOf(n) !== kind) continue;
    let path = '';
    for (let at = n, d = 0; d < depth && parent[at] !== -1; d += 1, at = parent[at])
      path = `${kindOf(parent[at])}${edgeName(parentEdge[at])} < ${path}`;
    add(rows, path, sizeOf(n));
  }
  show(rows);
}
