// The browser test's checks of the graph explorer (issue 19), run on the real report's page by
// browser_test.js: search by name path and inputs on every stage, provenance links, the memory
// chart of a symbolic model at the minimum and at typed values, fit-to-view and the minimap,
// kernel boxes, fusion decision filters and links, a failed open that keeps the report, the
// first stage's diff, labels. Expectations come from report_tool.py (protoc's Python modules),
// never from the page's own data.
"use strict";

// Nodes and inputs of `stage` (report_tool) that the page's search must match for `query`:
// a node whose op, name (or id, which is its name or n<index>) contains it, an input whose
// name does (the ONNX models here carry no source locations).
function expectedMatches(stage, query) {
  const q = query.toLowerCase();
  const nodes = stage.nodes.filter((n) => n.op.toLowerCase().includes(q) ||
                                          n.name.toLowerCase().includes(q) ||
                                          `n${n.index}`.includes(q)).length;
  const inputs = stage.inputs.filter((name) => name.toLowerCase().includes(q)).length;
  return nodes + inputs;
}

// The id the page gives a node (docs/inspector.md): its name if unique in the stage, else
// n<index>.
function nodeId(stage, node) {
  const same = stage.nodes.filter((n) => n.name === node.name).length;
  return node.name && same === 1 ? node.name : `n${node.index}`;
}

async function searchCount(page, query) {
  await page.fill("#search", query);
  const text = (await page.textContent("#search-count")) || "";
  const m = text.match(/of (\d+)/);
  return m ? Number(m[1]) : text === "no match" ? 0 : -1;
}

module.exports = async function explorerChecks(page, expect, env) {
  const {check, screenshot, showStage, badFile} = env;
  const stage = (key) => expect.stages.find((s) => s.key === key);
  const imp = stage("import"), prims = stage("prims"), ind = stage("inductor");
  if (!check(imp && prims && ind, "the report has import, prims and inductor stages")) return;

  // ---- search by an ONNX name on every stage; inputs are searchable ----
  // A name path of the model's ONNX graph that survives to the inductor stage.
  const named = imp.nodes.find((n) => n.name.startsWith("/") &&
                                      ind.nodes.some((m) => m.name === n.name) &&
                                      ind.kernels.some((k) => k.nodes.some((i) => ind.nodes[i].name === n.name)));
  if (check(named !== undefined, `an import node name reaches a kernel of inductor`)) {
    for (const s of [imp, prims, ind]) {
      await showStage(page, s.key, s.count);
      const want = expectedMatches(s, named.name);
      const got = await searchCount(page, named.name);
      check(want > 0 && got === want, `search "${named.name}" on ${s.key}: ${got} matches (want ${want})`);
    }
    // On inductor the match is drawn in its kernel's colour (a fused node).
    const fused = await page.$$eval("#graph-view .node.match", (els) => els.filter((e) => e.classList.contains("fused")).length);
    check(fused > 0, `search "${named.name}" on inductor finds a fused node (${fused})`);
    await screenshot(page, "search-inductor");
    // Module path fragments ("blocks.1", "ln1") on prims, where decompositions made the nodes.
    await showStage(page, prims.key, prims.count);
    for (const q of ["blocks.1", "ln1"]) {
      const want = expectedMatches(prims, q), got = await searchCount(page, q);
      check(want > 0 && got === want, `search "${q}" on prims: ${got} matches (want ${want})`);
    }
  }
  await showStage(page, prims.key, prims.count);
  if (prims.inputs.length) {
    const q = prims.inputs[0];
    const got = await searchCount(page, q);
    const inputMatched = await page.$$eval("#graph-view .node.input.match", (els) => els.length);
    check(got === expectedMatches(prims, q) && inputMatched >= 1,
          `search "${q}" on prims matches the graph input (${inputMatched} inputs, ${got} in all)`);
  }
  await page.fill("#search", "");

  // ---- name path groups: a group's link searches for its prefix ----
  await showStage(page, imp.key, imp.count);
  await showStage(page, prims.key, prims.count);
  const group = await page.$eval("#name-groups [data-group]", (e) => e.dataset.group).catch(() => null);
  if (check(group !== null, `prims lists name path groups (first: ${group})`)) {
    const members = prims.nodes.filter((n) => n.name.startsWith(group)).length;
    await page.click(`#name-groups [data-group="${group}"]`);
    const text = (await page.textContent("#search-count")) || "";
    const got = Number((text.match(/of (\d+)/) || [])[1]);
    check(members > 1 && got === expectedMatches(prims, group) && got >= members,
          `group "${group}" highlights its ${members} nodes (search: ${text})`);
  }
  await page.fill("#search", "");

  // ---- provenance: a prims node links to its import ancestor and its inductor kernels ----
  if (named) {
    const node = prims.nodes.find((n) => n.name === named.name);
    await page.locator(`#graph-view [data-node-index="${node.index}"]`).dispatchEvent("click");
    try {
      await page.waitForSelector("#node-provenance", {timeout: 5000});
    } catch (e) { /* reported below */ }
    const links = await page.$$eval("#node-provenance .provenance", (divs) => divs.map((d) => ({
      stage: d.dataset.stage,
      ids: [...d.querySelectorAll("[data-node-id]")].map((e) => e.dataset.nodeId),
      kernels: [...d.querySelectorAll("[data-kernel-name]")].map((e) => e.dataset.kernelName),
    })));
    const at = (key) => links.find((l) => l.stage === key) || {ids: [], kernels: []};
    const wantImport = imp.nodes.filter((n) => n.name === named.name).map((n) => nodeId(imp, n));
    check(JSON.stringify(at("import").ids) === JSON.stringify(wantImport.slice(0, 16)),
          `prims node "${named.name}": ancestors on import ${JSON.stringify(at("import").ids)} (want ${JSON.stringify(wantImport)})`);
    const wantKernels = ind.kernels.filter((k) => k.nodes.some((i) => ind.nodes[i].name === named.name)).map((k) => k.name);
    check(JSON.stringify(at("inductor").kernels) === JSON.stringify(wantKernels),
          `prims node "${named.name}": kernels on inductor ${JSON.stringify(at("inductor").kernels)} (want ${JSON.stringify(wantKernels)})`);
    await screenshot(page, "provenance");
    // Following the import link opens that stage and node.
    await page.click(`#node-provenance [data-stage="import"] [data-node-id]`);
    const shown = await page.$eval(".stage-tab.active", (e) => e.dataset.stage).catch(() => null);
    const op = await page.textContent("#node-details h3").catch(() => "");
    check(shown === "import" && op === named.op, `the ancestor link opens import's ${named.op} (${shown}, ${op})`);
  }

  // ---- edges carry their value's shape when zoomed in ----
  await showStage(page, prims.key, prims.count);
  await page.click("#zoom-in");
  await page.click("#zoom-in");
  await page.waitForFunction(() => Number(document.querySelector("#graph-view").dataset.edgeLabels) > 0,
                             null, {timeout: 5000}).catch(() => {});
  const labels = await page.$eval("#graph-view", (e) => Number(e.dataset.edgeLabels));
  check(labels > 0, `edges are labelled with their types when zoomed in (${labels} labels)`);
  await screenshot(page, "edge-labels");

  // ---- the memory chart of a symbolic model: one rectangle per arena buffer ----
  await showStage(page, ind.key, ind.count);
  await page.click('.panel-tab[data-panel="memory"]');
  const rects = await page.locator("#memory-plan rect.buffer-rect").count();
  const sym = ind.symbols[0];
  const from = await page.$eval("#memory-plan input.symbol-value", (e) => e.title).catch(() => "");
  check(rects === ind.arena_buffers && rects > 0,
        `memory chart: ${rects} rectangles for ${ind.arena_buffers} arena buffers (${from})`);
  if (sym) {
    await page.fill("#memory-plan input.symbol-value", "8");
    await page.press("#memory-plan input.symbol-value", "Enter");
    const arena = await page.$eval("#memory-chart", (e) => Number(e.dataset.arenaBytes)).catch(() => -1);
    const rects8 = await page.locator("#memory-plan rect.buffer-rect").count();
    check(arena === ind.arena_bytes_at["8"] && rects8 === ind.arena_buffers,
          `memory chart at ${sym.name}=8: arena ${arena} bytes (want ${ind.arena_bytes_at["8"]}), ${rects8} rectangles`);
    await screenshot(page, "memory-at-8");
  }
  // "reuses" names a buffer of the table.
  const table = await page.$$eval("#memory-plan table.data tbody tr", (rows) =>
      rows.map((r) => [...r.cells].map((c) => c.textContent)));
  const bufferNames = new Set(table.map((r) => r[0]));
  const reuses = table.map((r) => r[6].replace(/ in place$/, "")).filter((x) => x);
  check(reuses.length > 0 && reuses.every((x) => bufferNames.has(x)),
        `memory table: every "reuses" entry (${reuses.length}) names a buffer of the table`);

  // ---- fit-to-view shows every node; the minimap is there ----
  await page.click('.panel-tab[data-panel="graph"]');
  await page.click("#zoom-fit");
  await page.waitForTimeout(50);
  const fit = await page.evaluate(() => {
    const v = document.querySelector("#graph-view").getBoundingClientRect();
    let outside = 0, n = 0;
    for (const e of document.querySelectorAll("#graph-view .node")) {
      const r = e.getBoundingClientRect();
      n += 1;
      if (r.left < v.left - 1 || r.right > v.right + 1 || r.top < v.top - 1 || r.bottom > v.bottom + 1) outside += 1;
    }
    const m = document.querySelector("#graph-view canvas.minimap");
    return {n, outside, minimap: !!m && m.getBoundingClientRect().width > 0};
  });
  check(fit.n === ind.count + ind.inputs.length && fit.outside === 0,
        `fit-to-view: ${fit.n - fit.outside} of ${fit.n} boxes inside the view`);
  check(fit.minimap, "the minimap is drawn");
  await screenshot(page, "fit-inductor");

  // ---- kernel boxes contain exactly their kernel's nodes, in distinct colours ----
  const drawn = await page.evaluate(() => {
    const box = (e) => ({x0: parseFloat(e.style.left), y0: parseFloat(e.style.top),
                         x1: parseFloat(e.style.left) + parseFloat(e.style.width),
                         y1: parseFloat(e.style.top) + parseFloat(e.style.height)});
    return {
      boxes: [...document.querySelectorAll("#graph-view .kernel-box")].map((e) =>
          Object.assign(box(e), {kernel: Number(e.dataset.kernel), colour: e.style.borderColor})),
      nodes: [...document.querySelectorAll("#graph-view [data-node-index]")].map((e) =>
          Object.assign(box(e), {index: Number(e.dataset.nodeIndex)})),
    };
  });
  const firstKernel = new Map();
  ind.kernels.forEach((k, ki) => k.nodes.forEach((i) => { if (!firstKernel.has(i)) firstKernel.set(i, ki); }));
  const inside = (a, b) => a.x0 >= b.x0 && a.x1 <= b.x1 && a.y0 >= b.y0 && a.y1 <= b.y1;
  const overlaps = (a, b) => a.x0 < b.x1 && a.x1 > b.x0 && a.y0 < b.y1 && a.y1 > b.y0;
  let foreign = 0, uncovered = 0;
  for (const b of drawn.boxes) {
    const mine = new Set(ind.kernels[b.kernel].nodes);
    foreign += drawn.nodes.filter((n) => overlaps(n, b) && !mine.has(n.index)).length;
  }
  for (const n of drawn.nodes) {
    if (!firstKernel.has(n.index)) continue;
    const k = firstKernel.get(n.index);
    if (!drawn.boxes.some((b) => b.kernel === k && inside(n, b))) uncovered += 1;
  }
  check(drawn.boxes.length > 0 && foreign === 0 && uncovered === 0,
        `kernel boxes (${drawn.boxes.length} for ${ind.kernels.length} kernels): ${foreign} foreign nodes inside, ` +
        `${uncovered} kernel nodes outside their kernel's boxes`);
  const colour = new Map(drawn.boxes.map((b) => [b.kernel, b.colour]));
  let same = 0;
  for (const [k, c] of colour) {
    for (const [j, d] of colour) if (j > k && j - k <= 24 && c === d) same += 1;
  }
  check(same === 0, `kernels within 24 of each other have distinct colours (${same} pairs share one)`);

  // ---- fusion decisions: filters, and links to the final kernels ----
  await page.click('.panel-tab[data-panel="info"]');
  const count = async () => (await page.textContent("#decision-count")) || "";
  check((await count()) === `${ind.decisions} of ${ind.decisions}`, `decisions: ${await count()} shown`);
  await page.selectOption("#decision-verdict", "no");
  const verdicts = await page.$$eval("#decision-table tbody tr", (rows) => rows.map((r) => r.cells[4].textContent));
  check(verdicts.length === ind.rejected && verdicts.every((v) => v === "no"),
        `decisions filtered to rejected: ${verdicts.length} rows (want ${ind.rejected})`);
  await page.selectOption("#decision-verdict", "all");
  const kname = ind.kernels[ind.kernels.length - 1].name;
  await page.fill("#decision-filter", kname);
  const rows = await page.$$eval("#decision-table tbody tr", (rs) => rs.map((r) => r.textContent));
  check(rows.length > 0 && rows.every((r) => r.includes(kname)), `decision filter "${kname}": ${rows.length} rows, each naming it`);
  const link = page.locator("#decision-table [data-kernel]").first();
  const k = Number(await link.getAttribute("data-kernel"));
  await link.click();
  const picked = await page.$eval("#kernel-table tr.picked", (r) => Number(r.dataset.kernel)).catch(() => -1);
  const visible = await page.isVisible("#kernel-table");
  check(visible && picked === k, `a decision's kernel link shows kernel ${k} in the kernel table (${picked})`);
  await screenshot(page, "decision-kernel");

  // ---- the compare view of prims vs inductor lists the fused groups ----
  await showStage(page, ind.key, ind.count);
  await page.click('.panel-tab[data-panel="diff"]');
  const prevIndex = expect.stages.findIndex((x) => x.key === prims.key);
  await page.selectOption("#diff-against", String(prevIndex));
  const groups = await page.$$eval("#fused-groups tbody tr", (rows) => rows.map((r) => r.cells[1].textContent));
  const wantGroups = ind.kernels.filter((k) => k.nodes.length > 1).map((k) => k.name);
  check(wantGroups.length > 0 && JSON.stringify(groups) === JSON.stringify(wantGroups),
        `compare prims -> inductor: ${groups.length} fused groups listed (want ${wantGroups.length})`);
  await screenshot(page, "compare-prims-inductor");

  // ---- labels: the first stage diffs against another; no "? ? ?" guard; no "0 s" time ----
  await page.click('.panel-tab[data-panel="graph"]');
  await showStage(page, expect.stages[0].key, expect.stages[0].count);
  const against = await page.$eval("#diff-against", (e) => e.value);
  check(against !== "0", `the first stage's diff is against stage ${against}, not itself`);
  let questionable = 0;
  for (const s of expect.stages) {
    await showStage(page, s.key, s.count);
    questionable += ((await page.textContent("#stage-info")) || "").includes("? ? ?") ? 1 : 0;
  }
  check(questionable === 0, `no stage shows a "? ? ?" guard (${questionable})`);
  const times = await page.$$eval("#timings td.num", (tds) => tds.map((t) => t.textContent));
  check(times.length > 0 && !times.includes("0 s"), `timings: no "0 s" (${times.slice(0, 6)})`);

  // ---- a file that fails to open leaves the loaded report ----
  const tabsBefore = await page.locator(".stage-tab").count();
  const infoBefore = await page.textContent("#file-info");
  await page.setInputFiles("#file-input", badFile);
  await page.waitForFunction(() => !document.querySelector("#error").hidden, null, {timeout: 10000}).catch(() => {});
  const err = (await page.textContent("#error")) || "";
  const tabsAfter = await page.locator(".stage-tab").count();
  const mainVisible = await page.isVisible("#main");
  check(err.includes(require("path").basename(badFile)) && tabsAfter === tabsBefore && mainVisible &&
        (await page.textContent("#file-info")) === infoBefore,
        `a failed open keeps the report (${tabsAfter} tabs, error ${JSON.stringify(err.slice(0, 80))})`);
  await screenshot(page, "failed-open");
};
