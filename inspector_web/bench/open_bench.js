// How long a real compile's report takes to open in the inspector (docs/inspector.md): each
// stage opened by a deep link, three loads each, from navigation start to data-ready, with the
// page's own share (body.dataset.timing), the boxes drawn (name path groups collapse large
// graphs) and what expanding everything, collapsing and clicking a group cost.
//
//   node inspector_web/bench/open_bench.js COIL DUMP_DIR INDEX_HTML [STAGE ...]
//
// COIL serves DUMP_DIR (`coil compile MODEL --dump DUMP_DIR`) with `coil inspect --page
// INDEX_HTML`; stages default to prims, inductor and codegen_cpu. Prints one line per stage.
'use strict';
const path = require('path');
const { spawn } = require('child_process');

const modules = path.join(__dirname, '..', 'node_modules');
const { chromium } = require(path.join(modules, 'playwright-core'));

async function main() {
  const [coil, dir, page, ...stages] = process.argv.slice(2);
  if (!page) throw new Error('usage: open_bench.js COIL DUMP_DIR INDEX_HTML [STAGE ...]');
  const proc = spawn(coil, ['inspect', dir, '--port', '0', '--page', page], { stdio: ['ignore', 'pipe', 'ignore'] });
  const url = await new Promise((resolve) => {
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/(http:\S+)\n/);
      if (m) resolve(m[1]);
    });
  });
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const clickMs = (p, selector) => p.evaluate((s) => {
    const e = document.querySelector(s);
    if (!e) return null;
    const t0 = performance.now();
    e.click();
    return Math.round(performance.now() - t0);
  }, selector);
  try {
    for (const key of stages.length ? stages : ['prims', 'inductor', 'codegen_cpu']) {
      const runs = [];
      let info = null;
      for (let run = 0; run < 3; ++run) {
        const p = await context.newPage();
        await p.goto(`${url}#${key}`, { waitUntil: 'commit' });
        await p.waitForSelector('body[data-ready="1"]', { state: 'attached', timeout: 120000 });
        runs.push(Math.round(await p.evaluate(() => performance.now())));
        if (run === 0) {
          info = await p.evaluate(() => {
            const g = document.querySelector('#graph-view');
            return { nodes: Number(g.dataset.nodeCount), boxes: Number(g.dataset.itemCount),
              groups: g.querySelectorAll('.node.group').length, timing: JSON.parse(document.body.dataset.timing) };
          });
          info.expand_all_ms = await clickMs(p, '#groups-expand');
          info.collapse_ms = await clickMs(p, '#groups-collapse');
          info.click_group_ms = await clickMs(p, '.node.group');
        }
        await p.close();
      }
      const median = [...runs].sort((a, b) => a - b)[1];
      console.log(`${key}: ready ${median} ms (median of ${runs.join(', ')}) ${JSON.stringify(info)}`);
    }
  } finally {
    await browser.close();
    proc.kill();
  }
}

main().catch((e) => {
  console.error(e.stack || e);
  process.exit(1);
});
