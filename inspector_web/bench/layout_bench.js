// The layout measurement behind the inspector's own layered layout (docs/inspector.md):
// dagre and elkjs (npm, the maintained JS layout libraries) against coil's C++ layout in
// WebAssembly, on the same model-shaped DAGs, in Debian's headless Chromium.
//
//   node inspector_web/bench/layout_bench.js bazel-bin/inspector_web/index.html \
//        [--sizes 250,500,1000,2000,5000] [--limit-ms 20000]
//
// A DAG of N nodes: a chain with a residual edge every 4 nodes and a long skip edge from a
// random earlier node at 5% of nodes (seeded). Libraries get 120x30 boxes; a library is not
// run again at larger sizes once it took longer than --limit-ms. For coil the graph is
// written as a coil.proto.Graph, embedded in the page as `coil inspect --export` does, and
// the page's own timing (body.dataset.timing) is reported with the wall time from
// navigation to data-ready (first paint after rendering). Prints a Markdown table.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');

const modules = path.join(__dirname, '..', 'node_modules');
const { chromium } = require(path.join(modules, 'playwright-core'));

function args() {
  const a = process.argv.slice(2);
  const out = { page: a[0], sizes: [250, 500, 1000, 2000, 5000], limitMs: 20000 };
  for (let i = 1; i < a.length; i += 2) {
    if (a[i] === '--sizes') out.sizes = a[i + 1].split(',').map(Number);
    else if (a[i] === '--limit-ms') out.limitMs = Number(a[i + 1]);
    else throw new Error(`unknown argument ${a[i]}`);
  }
  if (!out.page) throw new Error('usage: layout_bench.js INDEX_HTML [--sizes N,...] [--limit-ms MS]');
  return out;
}

function dag(n) {
  let s = 12345;
  const rnd = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
  const edges = [];
  for (let i = 1; i < n; ++i) {
    edges.push([i - 1, i]);
    if (i % 4 === 0) edges.push([i - 4, i]);
    if (rnd() < 0.05) edges.push([Math.floor(rnd() * i), i]);
  }
  return edges;
}

// --- A minimal protobuf writer for coil.proto.Graph (ir/proto/graph.proto). ---------------
function varint(out, v) {
  while (v > 127) { out.push((v & 127) | 128); v = Math.floor(v / 128); }
  out.push(v);
}
function field(out, number, wire) { varint(out, number * 8 + wire); }
function bytesField(out, number, bytes) { field(out, number, 2); varint(out, bytes.length); out.push(...bytes); }
function stringField(out, number, s) { bytesField(out, number, Array.from(Buffer.from(s, 'utf8'))); }
function intField(out, number, v) { field(out, number, 0); varint(out, v); }
function value(id) {  // Value {id, type: f32[64]}
  const shape = []; intField(shape, 1, 1); intField(shape, 2, 64);   // SymExpr CONST 64
  const type = []; intField(type, 1, 1); bytesField(type, 3, shape);  // TensorType f32
  const v = []; intField(v, 1, id); bytesField(v, 3, type);
  return v;
}
const OPS = ['aten.linear', 'aten.add', 'aten.layer_norm', 'aten.gelu', 'aten.softmax', 'aten.matmul'];
function graphProto(n, edges) {
  const ins = Array.from({ length: n }, () => []);
  for (const [a, b] of edges) ins[b].push(a);
  const g = [];
  stringField(g, 1, `bench_${n}`);
  bytesField(g, 2, value(0));  // one graph input, read by node 0; node i outputs value i + 1
  for (let i = 0; i < n; ++i) {
    const node = [];
    stringField(node, 1, OPS[i % OPS.length]);
    const packed = [];
    for (const a of (i === 0 ? [-1] : ins[i])) varint(packed, a + 1);
    bytesField(node, 2, packed);
    bytesField(node, 4, value(i + 1));
    bytesField(g, 4, node);
  }
  intField(g, 5, n);
  return Buffer.from(g);
}

async function main() {
  const o = args();
  const template = fs.readFileSync(o.page, 'utf8');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'layout_bench_'));
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const libs = await browser.newPage();
  await libs.setContent('<html><body></body></html>');
  await libs.addScriptTag({ path: path.join(modules, '@dagrejs/dagre/dist/dagre.min.js') });
  await libs.addScriptTag({ path: path.join(modules, 'elkjs/lib/elk.bundled.js') });
  const over = { dagre: false, elkjs: false };
  const rows = [];
  for (const n of o.sizes) {
    const edges = dag(n);
    const row = { n, edges: edges.length };
    for (const lib of ['dagre', 'elkjs']) {
      if (over[lib]) { row[lib] = 'not run'; continue; }
      try {
        row[lib] = Math.round(await libs.evaluate(async ([lib, n, edges]) => {
          const t0 = performance.now();
          if (lib === 'dagre') {
            const g = new dagre.graphlib.Graph();
            g.setGraph({ rankdir: 'TB' });
            g.setDefaultEdgeLabel(() => ({}));
            for (let i = 0; i < n; ++i) g.setNode('n' + i, { width: 120, height: 30 });
            for (const [a, b] of edges) g.setEdge('n' + a, 'n' + b);
            dagre.layout(g);
          } else {
            await new ELK().layout({
              id: 'root', layoutOptions: { 'elk.algorithm': 'layered', 'elk.direction': 'DOWN' },
              children: Array.from({ length: n }, (_, i) => ({ id: 'n' + i, width: 120, height: 30 })),
              edges: edges.map(([a, b], k) => ({ id: 'e' + k, sources: ['n' + a], targets: ['n' + b] })),
            });
          }
          return performance.now() - t0;
        }, [lib, n, edges]));
        if (row[lib] > o.limitMs) over[lib] = true;
      } catch (e) {
        row[lib] = 'failed: ' + String(e.message || e).split('\n')[0].slice(0, 60);
        over[lib] = true;
      }
    }
    const file = path.join(tmp, `bench_${n}.html`);
    const b64 = graphProto(n, edges).toString('base64');
    fs.writeFileSync(file, template.replace(
      '<script id="coil-embedded" type="application/octet-stream" data-name="report.pb"></script>',
      `<script id="coil-embedded" type="application/octet-stream" data-name="bench_${n}.pb">${b64}</script>`));
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const t0 = Date.now();
    await page.goto('file://' + file);
    await page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 120000 });
    row.coil_wall = Date.now() - t0;
    const t = JSON.parse(await page.evaluate(() => document.body.dataset.timing || '{}'));
    row.coil = t;
    const count = await page.evaluate(() => document.getElementById('graph-view').dataset.nodeCount);
    if (Number(count) !== n) throw new Error(`the page shows ${count} nodes, not ${n}`);
    await page.close();
    rows.push(row);
    console.error(JSON.stringify(row));
  }
  await browser.close();
  const ms = (v) => (typeof v === 'number' ? `${v} ms` : v);
  console.log('| nodes | edges | dagre | elkjs | coil: open + layout/JSON + draw | coil page ready |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(`| ${r.n} | ${r.edges} | ${ms(r.dagre)} | ${ms(r.elkjs)} | ` +
      `${r.coil.open_ms} + ${r.coil.stage_ms} + ${r.coil.render_ms} ms | ${r.coil_wall} ms |`);
  }
}

main().catch((e) => {
  console.error('layout_bench: ' + (e.stack || e));
  process.exitCode = 1;
});
