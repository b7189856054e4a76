// The browser test's checks of the Compare panel (#compare), run by browser_test.js: the GPT's
// CPU report is open and the page compares it with a second compile chosen in the panel's file
// picker — the same model compiled for CUDA, its inductor schedule fused otherwise
// (report_tool.py split: two kernels split in two, one decision dropped). What the panel must
// list comes from report_tool.py compare (protoc's Python modules, its own kernel matching),
// independently of the page's core.
"use strict";

module.exports = async function compareChecks(page, expect, files, {check, screenshot, waitReady}) {
  await page.click('.panel-tab[data-panel="compare"]');
  await page.setInputFiles("#compare-input", files.b);
  if (!(await waitReady(page, "compare"))) return;
  const shown = await page.evaluate(() => {
    const rows = (sel) => [...document.querySelectorAll(`${sel} tbody tr`)];
    const summary = document.querySelector("#compare-summary");
    return {
      visible: !document.querySelector("#compare").hidden,
      summary: summary ? summary.textContent : null,
      kernelsA: rows("#compare-kernels-a").map((r) => ({index: Number(r.dataset.kernel), name: r.dataset.name})),
      kernelsB: rows("#compare-kernels-b").map((r) => ({index: Number(r.dataset.kernel), name: r.dataset.name})),
      timings: rows("#compare-timings").map((r) => ({stage: r.dataset.stage,
        a: r.querySelector("td.a span").title, b: r.querySelector("td.b span").title})),
      stages: rows("#compare-stages").map((r) => ({key: r.dataset.key, cls: r.className})),
      options: rows("#compare-options").map((r) => [...r.cells].map((c) => c.textContent)),
      decisionsA: rows("#compare-decisions-a").length,
      decisionsB: rows("#compare-decisions-b").length,
    };
  });
  if (!check(shown.visible && shown.summary !== null,
             `compare: choosing ${files.b_name} shows the comparison (#compare-summary)`)) return;
  await screenshot(page, "compare");
  const same = (x, y) => JSON.stringify(x) === JSON.stringify(y);
  check(shown.summary.includes(`${expect.a_count} and ${expect.b_count}, ${expect.same} computing the same nodes`),
        `compare: ${expect.a_count} and ${expect.b_count} kernels, ${expect.same} the same (page: "${shown.summary.slice(0, 200)}")`);
  check(same(shown.kernelsA, expect.only_a) && same(shown.kernelsB, expect.only_b),
        `compare: the kernels only in a (${expect.only_a.map((k) => k.name)}) and only in b ` +
        `(${expect.only_b.map((k) => k.name)}) are listed, in order (page: ${JSON.stringify(shown.kernelsA)} / ` +
        `${JSON.stringify(shown.kernelsB)})`);
  const d = expect.decisions;
  check(shown.summary.includes(`${d.a_accepted} accepted / ${d.a_rejected} rejected in a, ${d.b_accepted} / ${d.b_rejected} in b`) &&
        shown.decisionsA === d.only_a && shown.decisionsB === d.only_b,
        `compare: decision counts and the ${d.only_a} decision(s) only in a, ${d.only_b} only in b ` +
        `(page: ${shown.decisionsA} / ${shown.decisionsB})`);
  const wantTimings = expect.timings.map(([stage, a, b]) => ({stage,
    a: a === null ? "no such row" : `${a} s`, b: b === null ? "no such row" : `${b} s`}));
  check(same(shown.timings, wantTimings),
        `compare: ${wantTimings.length} stage timing rows paired by stage with exact seconds ` +
        `(page: ${JSON.stringify(shown.timings).slice(0, 300)})`);
  const keys = [...expect.stages_a, ...expect.stages_b.filter((k) => !expect.stages_a.includes(k))];
  const marked = (k) => (!expect.stages_a.includes(k) ? "added" : !expect.stages_b.includes(k) ? "removed" : "");
  check(same(shown.stages, keys.map((k) => ({key: k, cls: marked(k)}))),
        `compare: stages of both side by side, those of one side marked (page: ${JSON.stringify(shown.stages)})`);
  check(same(shown.options, expect.options),
        `compare: the options that differ (${JSON.stringify(expect.options)}; page ${JSON.stringify(shown.options)})`);

  // a's kernels link to the open report's kernels.
  if (expect.only_a.length) {
    await page.click(`#compare-kernels-a tr[data-kernel="${expect.only_a[0].index}"] .link`);
    const opened = await page.evaluate(() => ({
      panel: document.querySelector(".panel-tab.active")?.dataset.panel,
      stage: document.querySelector(".stage-tab.active")?.dataset.stage}));
    check(opened.panel === "kernels" && opened.stage === expect.kernel_stage_a,
          `compare: an only-in-a kernel's link opens the Kernels panel of ${expect.kernel_stage_a} ` +
          `(${JSON.stringify(opened)})`);
    await page.click('.panel-tab[data-panel="compare"]');
  }

  // A file that fails to load leaves the comparison.
  await page.setInputFiles("#compare-input", files.bad);
  if (!(await waitReady(page, "compare bad file"))) return;
  const after = await page.evaluate(() => ({
    error: document.querySelector("#compare-error")?.textContent || "",
    summary: document.querySelector("#compare-summary")?.textContent || "",
    kernelsB: document.querySelectorAll("#compare-kernels-b tbody tr").length}));
  check(after.error.includes(files.bad_name) && /not a coil/.test(after.error) &&
        after.summary === shown.summary && after.kernelsB === shown.kernelsB.length,
        `compare: a bad file (${files.bad_name}) is named in #compare-error and the comparison stays ` +
        `("${after.error.slice(0, 160)}")`);
};
