// The inspector's browser test: Playwright (npm playwright-core) drives Debian's chromium
// against `coil inspect` serving a real compile's artifacts, an exported file, bad files and a
// 5,000-node graph, and checks what the page shows against report_tool.py's expectations.
// The explorer's checks (provenance, memory plan, fit, kernel boxes, decisions, failed open)
// are in explorer_checks.js. Run by browser_test.sh, which prepares the inputs; all paths come
// from the environment:
//   COIL, ARTIFACTS (folder), EXPECT (json), EXPORT_HTML, BIG (pb), BIG_NODES, BIG_NAMED (pb),
//   BAD_FILES (json: [{"file", "pattern"}]), SINGLE_FILES (json: [{"file", "count"}]),
//   OUT (screenshots), PAGE_BUDGET_BYTES, BIG_BUDGET_MS, CUDA_ARTIFACTS (folder), CUDA_EXPECT,
//   RECOMPILED (pb), RECOMPILED_EXPECT (json: {"reason", "stages": [{"key", "count"}]}).
"use strict";

const fs = require("fs");
const path = require("path");
const { spawn } = require("child_process");
const { chromium } = require("playwright-core");
const explorerChecks = require("./explorer_checks.js");
const groupChecks = require("./group_checks.js");
const timingChecks = require("./timing_checks.js");
const compareChecks = require("./compare_checks.js");

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`browser_test.js: ${name} is not set (run it through browser_test.sh)`);
  return v;
};
const COIL = env("COIL");
const OUT = env("OUT");
const WAIT_MS = 30000;

const failures = [];
const measurements = {};
let checks = 0;
function check(ok, what) {
  checks += 1;
  if (ok) {
    console.log(`ok   ${what}`);
  } else {
    console.log(`FAIL ${what}`);
    failures.push(what);
  }
  return ok;
}

// `coil inspect SOURCE --port 0`: resolves to {url, proc} once it printed its URL.
function startServer(source, logName) {
  return new Promise((resolve, reject) => {
    const log = fs.openSync(path.join(OUT, `${logName}.server.log`), "w");
    const proc = spawn(COIL, ["inspect", source, "--port", "0"], {stdio: ["ignore", "pipe", log]});
    let stdout = "";
    const timer = setTimeout(() => reject(new Error(`coil inspect ${source}: no URL in 30 s`)),
                             WAIT_MS);
    proc.stdout.on("data", (d) => {
      stdout += d;
      const m = stdout.match(/^(http:\/\/127\.0\.0\.1:\d+\/)\n/);
      if (m) {
        clearTimeout(timer);
        resolve({url: m[1], proc});
      }
    });
    proc.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`coil inspect ${source} exited with ${code} (see ${logName}.server.log)`));
    });
  });
}

function stopServer(server) {
  server.proc.removeAllListeners("exit");
  server.proc.kill("SIGTERM");
}

async function waitReady(page, what) {
  try {
    await page.waitForSelector('body[data-ready="1"]', {timeout: WAIT_MS, state: "attached"});
    return true;
  } catch (e) {
    const text = (await page.textContent("body").catch(() => "")) || "";
    check(false, `${what}: body[data-ready=1] within ${WAIT_MS} ms (page text: ` +
                 `${JSON.stringify(text.slice(0, 200))})`);
    return false;
  }
}

async function screenshot(page, name) {
  await page.screenshot({path: path.join(OUT, `${name}.png`), fullPage: false});
}

async function errorText(page) {
  return ((await page.textContent("#error").catch(() => null)) || "").trim();
}

async function nodeCount(page) {
  return page.$eval("#graph-view", (e) => e.dataset.nodeCount).catch(() => undefined);
}

// Clicks a stage tab and waits for #graph-view to show the expected node count.
async function showStage(page, key, count) {
  await page.click(`.stage-tab[data-stage="${key}"]`);
  try {
    await page.waitForFunction(
        (n) => document.querySelector("#graph-view")?.dataset.nodeCount === String(n), count,
        {timeout: 10000});
    return true;
  } catch (e) {
    return false;
  }
}

// Every stage of `expect` has a tab, no tab is unexpected, and each shows its node count.
async function checkStageCounts(page, expect, what) {
  const tabs = await page.$$eval(".stage-tab", (els) => els.map((e) => e.dataset.stage));
  const keys = expect.stages.map((s) => s.key);
  check(JSON.stringify([...tabs].sort()) === JSON.stringify([...keys].sort()),
        `${what}: stage tabs ${JSON.stringify(tabs)} are the report's ${JSON.stringify(keys)}`);
  for (const stage of expect.stages) {
    if (!tabs.includes(stage.key)) continue;
    const shown = await showStage(page, stage.key, stage.count);
    check(shown, `${what}: stage ${stage.key} shows data-node-count=${stage.count} ` +
                 `(page: ${await nodeCount(page)})`);
    if (shown && what === "report") await screenshot(page, `stage-${stage.key}`);
  }
}

// How the page names nodes in data-node-id: the scheme that names most of the ids drawn for
// `stage` (graph inputs may be drawn with ids of their own).
async function nodeIdScheme(page, stage) {
  const drawn = await page.$$eval("#graph-view [data-node-id]", (els) =>
      els.map((e) => e.getAttribute("data-node-id")));
  const uses = {};
  for (const n of stage.nodes) uses[n.name] = (uses[n.name] || 0) + 1;
  const schemes = {
    // docs/inspector.md: the node's name when no other node shares it, else n<position>.
    "unique name or n + position": (n) => (n.name && uses[n.name] === 1 ? n.name : `n${n.index}`),
    "n + position": (n) => `n${n.index}`,
    "position": (n) => String(n.index),
    "value id": (n) => String(n.first_output),
    "%value id": (n) => `%${n.first_output}`,
    "name": (n) => n.name,
  };
  let best = {name: null, id: null, drawn, matched: 0};
  for (const [name, id] of Object.entries(schemes)) {
    const ids = new Set(stage.nodes.map(id));
    const matched = drawn.filter((d) => ids.has(d)).length;
    if (matched > best.matched) best = {name, id, drawn, matched};
  }
  return best;
}

// A node worth clicking: unambiguous types, not the first node (which might be preselected).
function pickNode(stage) {
  const simple = stage.nodes.filter((n) => n.simple && n.outputs.length > 0);
  return simple[Math.floor(simple.length / 2)];
}

async function checkNodeDetails(page, node, what) {
  try {
    await page.waitForFunction(
        (op) => (document.querySelector("#node-details")?.textContent || "").includes(op),
        node.op, {timeout: 10000});
  } catch (e) { /* reported below */ }
  const details = (await page.textContent("#node-details").catch(() => "")) || "";
  check(details.includes(node.op), `${what}: #node-details shows op ${node.op}`);
  for (const t of node.outputs) {
    check(details.includes(t), `${what}: #node-details shows output type ${t}`);
  }
  return details;
}

async function main() {
  const expect = JSON.parse(fs.readFileSync(env("EXPECT"), "utf8"));
  const badFiles = JSON.parse(env("BAD_FILES"));
  const singleFiles = JSON.parse(env("SINGLE_FILES"));
  const pageBudget = Number(env("PAGE_BUDGET_BYTES"));
  const bigBudget = Number(env("BIG_BUDGET_MS"));
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run",
           "--disable-dev-shm-usage"],
  });
  measurements.chromium = browser.version();
  const context = await browser.newContext({viewport: {width: 1400, height: 900}});
  const servers = [];
  try {
    // ---- the real report, over http ----
    const main = await startServer(env("ARTIFACTS"), "artifacts");
    servers.push(main);
    const pageBytes = (await (await fetch(main.url)).arrayBuffer()).byteLength;
    measurements.page_bytes = pageBytes;
    check(pageBytes < pageBudget, `page + wasm is ${pageBytes} bytes (budget ${pageBudget})`);
    const files = await (await fetch(main.url + "files.json")).json();
    check(files.files[0] === "report.pb", `files.json lists report.pb first: ${files.files}`);

    const page = await context.newPage();
    const consoleErrors = [];
    page.on("pageerror", (e) => consoleErrors.push(String(e)));
    await page.goto(main.url);
    if (await waitReady(page, "report")) {
      await screenshot(page, "report");
      check((await errorText(page)) === "", `report: no error shown (${await errorText(page)})`);
      await checkStageCounts(page, expect, "report");

      // Click a node of the most interesting graph stage and read its details.
      const stage = expect.stages.find((s) => s.key === "prims") ||
                    expect.stages.find((s) => s.count > 0);
      const node = stage && pickNode(stage);
      if (check(node !== undefined, "the report has a node with simple types to click")) {
        await showStage(page, stage.key, stage.count);
        const scheme = await nodeIdScheme(page, stage);
        check(scheme.name !== null && scheme.matched === stage.count,
              `${stage.key}: every node is drawn with a data-node-id (${scheme.matched} of ` +
              `${stage.count} by ${scheme.name}; ids: ${scheme.drawn.slice(0, 5)}...)`);
        measurements.node_id_scheme = scheme.name;
        if (scheme.name !== null) {
          const id = scheme.id(node);
          const el = page.locator(`#graph-view [data-node-id="${id}"]`).first();
          try {
            await el.click({timeout: 5000});
          } catch (e) {
            await el.dispatchEvent("click");  // drawn outside the visible part of the view
          }
          await checkNodeDetails(page, node, `click ${stage.key}/${id}`);
          await screenshot(page, "node-details");

          // ---- deep link to the same node ----
          const deep = await context.newPage();
          await deep.goto(`${main.url}#${stage.key}/${encodeURIComponent(id)}`);
          if (await waitReady(deep, "deep link")) {
            try {
              await deep.waitForFunction(
                  (n) => document.querySelector("#graph-view")?.dataset.nodeCount === String(n),
                  stage.count, {timeout: 10000});
            } catch (e) { /* reported below */ }
            check(await nodeCount(deep) === String(stage.count),
                  `deep link #${stage.key}/${id} opens stage ${stage.key}`);
            await checkNodeDetails(deep, node, `deep link #${stage.key}/${id}`);
            await screenshot(deep, "deep-link");
          }
          await deep.close();
        }
      }
    }
    // ---- the explorer: provenance, search, memory, fit, kernels, decisions, labels ----
    await page.goto(main.url + "#");
    if (await waitReady(page, "report (explorer checks)")) {
      await explorerChecks(page, expect, {check, screenshot, showStage,
                                          badFile: badFiles[0].file});
      await groupChecks(page, expect, {check, screenshot, showStage});
      await timingChecks(page, expect, {check, screenshot});
    }
    // ---- the Compare panel: this CPU compile against a CUDA compile fused otherwise ----
    await page.goto(main.url + "#");
    if (await waitReady(page, "report (compare checks)")) {
      await compareChecks(page, JSON.parse(fs.readFileSync(env("COMPARE_EXPECT"), "utf8")),
        {b: env("COMPARE_B"), b_name: path.basename(env("COMPARE_B")),
         bad: badFiles[2].file, bad_name: path.basename(badFiles[2].file)},
        {check, screenshot, waitReady});
    }
    check(consoleErrors.length === 0, `no uncaught page errors (${consoleErrors})`);
    await page.close();

    // ---- the exported single file, from file:// ----
    const exported = await context.newPage();
    await exported.goto("file://" + env("EXPORT_HTML"));
    if (await waitReady(exported, "export")) {
      check((await errorText(exported)) === "", `export: no error shown`);
      await checkStageCounts(exported, expect, "export");
      await screenshot(exported, "export");
    }
    await exported.close();

    // ---- single stage files (a Graph, a Schedule): one stage, its graph's node count ----
    for (const single of singleFiles) {
      const name = path.basename(single.file);
      const server = await startServer(single.file, name);
      servers.push(server);
      const p = await context.newPage();
      await p.goto(server.url);
      if (await waitReady(p, name)) {
        const tabs = await p.$$eval(".stage-tab", (els) => els.map((e) => e.dataset.stage));
        check(tabs.length === 1 && (await errorText(p)) === "",
              `${name}: one stage tab (${JSON.stringify(tabs)}), no error`);
        if (tabs.length === 1) {
          check(await showStage(p, tabs[0], single.count),
                `${name}: data-node-count=${single.count} (page: ${await nodeCount(p)})`);
        }
        await screenshot(p, `single-${name}`);
      }
      await p.close();
    }

    // ---- bad input: a clear message, never a blank page ----
    for (const bad of badFiles) {
      const name = path.basename(bad.file);
      const server = await startServer(bad.file, name);
      servers.push(server);
      const p = await context.newPage();
      await p.goto(server.url);
      if (await waitReady(p, name)) {
        const text = await errorText(p);
        const visible = await p.isVisible("#error");
        check(visible && new RegExp(bad.pattern, "i").test(text) && text.includes(name),
              `${name}: #error is visible, names the file and matches /${bad.pattern}/i: ` +
              `${JSON.stringify(text)}`);
        await screenshot(p, `error-${name}`);
      }
      await p.close();
    }

    // ---- a 5,000-node graph renders (its 2 s budget is reported, not asserted) ----
    // Time from navigation start (performance.now() in the page) to data-ready: fetching the
    // page, instantiating the wasm, reading the file, layout and drawing. The median of three
    // loads, so one stall of a shared machine does not decide it.
    const big = await startServer(env("BIG"), "big");
    servers.push(big);
    const bigNodes = Number(env("BIG_NODES"));
    const runs = [];
    for (let run = 0; run < 3; ++run) {
      const p = await context.newPage();
      await p.goto(big.url, {waitUntil: "commit"});
      if (!(await waitReady(p, "big graph"))) {
        await p.close();
        break;
      }
      const inPage = await p.evaluate(() => ({now: performance.now(),
                                               timing: document.body.dataset.timing}));
      runs.push(Math.round(inPage.now));
      if (run === 0) {
        check(await nodeCount(p) === String(bigNodes),
              `big graph: data-node-count=${bigNodes} (page: ${await nodeCount(p)})`);
        measurements.big_graph_nodes = bigNodes;
        measurements.big_graph_nodes_drawn = await p.locator("[data-node-id]").count();
        // The page's own breakdown, when it gives one (decode, core open, stage JSON, drawing).
        if (inPage.timing) measurements.big_graph_page_timing = JSON.parse(inPage.timing);
        await screenshot(p, "big-graph");
      }
      await p.close();
    }
    if (runs.length === 3) {
      const median = [...runs].sort((a, b) => a - b)[1];
      measurements.big_graph_ready_ms = runs;
      measurements.big_graph_ready_median_ms = median;
      // Reported, not asserted: a test's pass must not depend on the machine's speed or load
      // (CI machines differ; this one is shared). inspector_web/bench/open_bench.js and
      // docs/inspector.md hold the budget's measurements.
      measurements.big_graph_within_budget = median < bigBudget;
      console.log(`budget (reported): big graph ready ${median} ms after navigation start ` +
                  `(median of ${runs.join(", ")}; budget ${bigBudget} ms)`);
    }

    // ---- a recompiled function: the compile index lists both compiles and the failed guard ----
    const recompiled = JSON.parse(env("RECOMPILED_EXPECT"));
    const rserver = await startServer(env("RECOMPILED"), "recompiled");
    servers.push(rserver);
    const rp = await context.newPage();
    await rp.goto(rserver.url);
    if (await waitReady(rp, "recompiled report")) {
      await rp.click('.panel-tab[data-panel="compiles"]');
      const rows = await rp.$$eval("#compile-table tbody tr", (trs) => trs.map((tr) => ({
        compile: tr.dataset.compile, reason: tr.querySelector("td.reason").textContent,
        links: [...tr.querySelectorAll("[data-stage-link]")].map((e) => e.dataset.stageLink)})));
      const want = recompiled.stages.map((s) => s.key);
      check(rows.length === 2 && rows[0].compile === "1" && rows[1].compile === "2" &&
            rows[1].reason.includes(recompiled.reason) && !rows[0].reason.includes(recompiled.reason) &&
            JSON.stringify(rows.flatMap((r) => r.links)) === JSON.stringify(want),
            `compile index: 2 compiles, the second naming the failed guard "${recompiled.reason}" ` +
            `(page: ${JSON.stringify(rows)})`);
      await screenshot(rp, "compile-index");
      const second = recompiled.stages[1];
      await rp.click(`#compile-table [data-stage-link="${second.key}"]`);
      const title = await rp.$eval(`.stage-tab[data-stage="${second.key}"]`, (e) => e.textContent).catch(() => "");
      check(await nodeCount(rp) === String(second.count) && title.includes("compile 2"),
            `compile index: compile 2's link opens ${second.key} (${await nodeCount(rp)} nodes, want ` +
            `${second.count}; tab "${title}")`);
    }
    await rp.close();

    // ---- a CUDA compile: kernel boxes carry their launch configurations ----
    const cudaExpect = JSON.parse(fs.readFileSync(env("CUDA_EXPECT"), "utf8"));
    const cudaStage = cudaExpect.stages.find((s) => s.backend === "cuda");
    if (check(cudaStage !== undefined && cudaStage.launch.length > 0,
              `cuda: the report's KernelModule has launch configurations (${cudaStage && cudaStage.launch.length})`)) {
      const cuda = await startServer(env("CUDA_ARTIFACTS"), "cuda");
      servers.push(cuda);
      const p = await context.newPage();
      await p.goto(cuda.url + "#" + cudaStage.key);
      if (await waitReady(p, "cuda report")) {
        const boxes = await p.$$eval(".kernel-box", (els) => els.map((e) => ({
          kernel: Number(e.dataset.kernel), launch: e.dataset.launch || "",
          label: e.querySelector(".launch")?.textContent || ""})));
        const wrong = [];
        for (const k of cudaStage.launch) {
          const want = [`grid ${k.grid.length ? "(" + k.grid.join(", ") + ")" : "(at launch)"}`,
                        `block (${k.block.join(", ")})`, `shared ${k.shared} B`];
          const mine = boxes.filter((b) => b.kernel === k.kernel);
          if (mine.length === 0 || mine.some((b) => !want.every((w) => b.launch.includes(w))) ||
              mine.filter((b) => b.label.includes(want[1])).length !== 1) {
            wrong.push(`${k.name}: want ${want.join(" ")}, page ${JSON.stringify(mine)}`);
          }
        }
        // Kernels without a launch configuration (extern calls) show none.
        const listed = new Set(cudaStage.launch.map((k) => k.kernel));
        const extra = boxes.filter((b) => !listed.has(b.kernel) && (b.launch || b.label));
        check(wrong.length === 0 && extra.length === 0,
              `cuda: each of ${listed.size} kernels' boxes show its grid, block and shared memory, ` +
              `labelled once (${wrong.slice(0, 2).join("; ")}${extra.length ? " extra: " + JSON.stringify(extra[0]) : ""})`);
        await p.click("#zoom-in");
        await screenshot(p, "cuda-launch");
      }
      await p.close();
    }

    // ---- a training compile (coil compile --train): autograd's graphs with saved values ----
    {
      const saved = JSON.parse(env("TRAIN_SAVED"));
      const train = await startServer(env("TRAIN_ARTIFACTS"), "train");
      servers.push(train);
      const p = await context.newPage();
      await p.goto(train.url + "#autograd.forward");
      if (await waitReady(p, "train report")) {
        const tabs = await p.$$eval(".stage-tab", (els) => els.map((e) => e.dataset.stage));
        const want = ["autograd.joint", "autograd.forward", "autograd.backward", "inductor", "backward.inductor"];
        check(want.every((k) => tabs.includes(k)),
              `train: coil compile --train's report has tabs ${want.join(", ")} (${tabs.join(", ")})`);
        const marks = await p.evaluate(() => ({
          count: document.querySelector("#graph-view").dataset.nodeCount,
          nodes: [...document.querySelectorAll(".node.saved[data-node-index]")].map((e) => Number(e.dataset.nodeIndex)),
          inputs: [...document.querySelectorAll(".node.input.saved")].map((e) => Number(e.dataset.inputIndex))}));
        const sorted = (a) => JSON.stringify([...a].sort((x, y) => x - y));
        check(marks.count === String(saved.counts.forward) && sorted(marks.nodes) === sorted(saved.forward_nodes) &&
              sorted(marks.inputs) === sorted(saved.forward_inputs),
              `train: the forward graph (${saved.counts.forward} nodes) marks exactly the ${saved.forward_nodes.length} ` +
              `nodes and ${saved.forward_inputs.length} inputs defining its ${saved.saved} saved values ` +
              `(page: ${marks.count} nodes, ${marks.nodes.length} + ${marks.inputs.length} marked)`);
        await screenshot(p, "train-forward");
      }
      await p.close();
    }

    // ---- a 5,000-node graph with module paths opens on its name path groups ----
    const named = await startServer(env("BIG_NAMED"), "big_named");
    servers.push(named);
    const namedRuns = [];
    for (let run = 0; run < 3; ++run) {
      const p = await context.newPage();
      await p.goto(named.url, {waitUntil: "commit"});
      if (!(await waitReady(p, "big named graph"))) {
        await p.close();
        break;
      }
      namedRuns.push(Math.round(await p.evaluate(() => performance.now())));
      if (run === 0) {
        const v = await p.evaluate(() => {
          const g = document.querySelector("#graph-view");
          return {items: Number(g.dataset.itemCount), groups: g.querySelectorAll(".node.group").length,
                  timing: document.body.dataset.timing};
        });
        // 50 layers of 2 modules of 50 nodes: the layers open into their 100 modules (101
        // boxes with the input, within the 120-box view); one more module would pass it.
        check(v.groups === 100 && v.items === 101,
              `big named graph: opens collapsed on its 100 modules (${v.items} boxes, ${v.groups} groups)`);
        measurements.big_named_page_timing = JSON.parse(v.timing);
        await screenshot(p, "big-named-collapsed");
        // Expanding everything lays out and draws all 5,000 nodes (measured, not budgeted).
        measurements.big_named_expand_all_ms = Math.round(await p.evaluate(() => {
          const t0 = performance.now();
          document.querySelector("#groups-expand").click();
          return performance.now() - t0;
        }));
        check(await p.locator("[data-node-index]").count() === bigNodes,
              `big named graph: expand draws all ${bigNodes} nodes`);
      }
      await p.close();
    }
    if (namedRuns.length === 3) {
      const median = [...namedRuns].sort((a, b) => a - b)[1];
      measurements.big_named_ready_ms = namedRuns;
      measurements.big_named_within_budget = median < bigBudget;
      console.log(`budget (reported): big named graph ready ${median} ms after navigation ` +
                  `start, collapsed (median of ${namedRuns.join(", ")}; budget ${bigBudget} ms)`);
    }
  } finally {
    for (const s of servers) stopServer(s);
    await browser.close();
  }
  console.log("MEASUREMENTS " + JSON.stringify(measurements));
  console.log(`browser test: ${checks - failures.length} of ${checks} checks passed`);
  if (failures.length > 0) {
    console.log("failed:\n  " + failures.join("\n  "));
    process.exit(1);
  }
}

main().catch((e) => {
  console.error("browser test: " + (e.stack || e));
  process.exit(1);
});
