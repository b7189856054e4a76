// The browser test's checks of the Timings chart (#timing-chart), run by browser_test.js on
// the GPT report. The report's StageTiming rows and PassRun records come from report_tool.py
// (protoc's Python modules), independently of the page's core: the chart must draw one bar
// per timing row, in order, with widths proportional to the recorded wall (and CPU) seconds,
// and nest the pass records under the stage their pipeline names, each pass bar proportional
// to its seconds and a stage's pass bars together no wider than the stage's bar.
"use strict";

const TOLERANCE_PX = 0.75;  // layout rounds widths to fractions of a pixel

module.exports = async function timingChecks(page, expect, {check, screenshot}) {
  const timings = expect.timings;
  const passes = expect.passes;
  check(timings.length > 0 && passes.length > 0,
        `timings: the report records stage timings (${timings.length}) and passes (${passes.length})`);
  await page.click('.panel-tab[data-panel="timings"]');
  const drawn = await page.evaluate(() => {
    const chart = document.querySelector("#timing-chart");
    if (!chart) return null;
    const width = (e) => (e ? e.getBoundingClientRect().width : null);
    return [...chart.querySelectorAll(".timing-stage")].map((row) => {
      const nested = chart.querySelector(`.timing-passes[data-timing-index="${row.dataset.timingIndex}"]`);
      return {
        stage: row.dataset.stage, title: row.title,
        wall: width(row.querySelector(".timing-bar.wall")), cpu: width(row.querySelector(".timing-bar.cpu")),
        passes: nested ? [...nested.querySelectorAll(".timing-pass")].map((p) => ({
          pipeline: p.dataset.pipeline, pass: p.dataset.pass, title: p.title,
          width: width(p.querySelector(".timing-bar"))})) : [],
      };
    });
  });
  if (!check(drawn !== null, "timings: the Timings panel has a #timing-chart")) return;
  await screenshot(page, "timing-chart");

  // One bar per recorded stage, in the report's order, titled with the exact seconds.
  check(drawn.length === timings.length &&
        drawn.every((d, i) => d.stage === timings[i].stage && d.title.includes(`wall ${timings[i].seconds} s`)),
        `timings: one bar per StageTiming row in order with its exact seconds in the title ` +
        `(page ${JSON.stringify(drawn.map((d) => d.stage))}, report ${JSON.stringify(timings.map((t) => t.stage))})`);
  if (drawn.length !== timings.length) return;

  // Widths proportional to the recorded times: one pixels-per-second scale, taken from the
  // longest wall bar, fits every wall, CPU and pass bar.
  let longest = 0;
  timings.forEach((t, i) => { if (t.seconds > timings[longest].seconds) longest = i; });
  const scale = drawn[longest].wall / timings[longest].seconds;
  const off = [];
  timings.forEach((t, i) => {
    const d = drawn[i];
    if (Math.abs(d.wall - scale * t.seconds) > TOLERANCE_PX) off.push(`${t.stage} wall ${d.wall}px for ${t.seconds} s`);
    const wantCpu = t.cpu_seconds > 0;
    if (wantCpu !== (d.cpu !== null) ||
        (wantCpu && Math.abs(d.cpu - scale * t.cpu_seconds) > TOLERANCE_PX)) {
      off.push(`${t.stage} cpu ${d.cpu}px for ${t.cpu_seconds} s`);
    }
  });
  check(scale > 0 && off.length === 0,
        `timings: bar widths proportional to the report's seconds at ${scale.toFixed(1)} px/s (${off.slice(0, 3).join("; ")})`);

  // Passes: every pass record appears once, in the report's order, under a stage its pipeline
  // names (the longest dot-separated prefix naming a stage row), with a width proportional to its seconds, and a
  // stage's passes sum to no more than the stage's wall time (seconds and pixels).
  const nested = drawn.flatMap((d, i) => d.passes.map((p) => ({...p, stage: timings[i].stage, row: i})));
  const stages = new Set(timings.map((t) => t.stage));
  const stageOf = (pipeline) => {
    const parts = pipeline.split(".");
    for (let n = parts.length; n > 0; --n) {
      if (stages.has(parts.slice(0, n).join("."))) return parts.slice(0, n).join(".");
    }
    return null;
  };
  const placeable = passes.filter((p) => stageOf(p.pipeline) !== null);
  const wrong = [];
  if (nested.length !== placeable.length) wrong.push(`${nested.length} nested, ${placeable.length} recorded`);
  nested.forEach((p, k) => {
    const want = placeable[k];
    if (!want || p.pipeline !== want.pipeline || p.pass !== want.pass) {
      wrong.push(`#${k}: ${p.pipeline}/${p.pass} where the report has ${want && want.pipeline}/${want && want.pass}`);
    } else {
      p.seconds = want.seconds;  // the report's, for the sums below
      if (p.stage !== stageOf(want.pipeline)) {
        wrong.push(`${p.pipeline}/${p.pass} under ${p.stage}`);
      } else if (Math.abs(p.width - scale * want.seconds) > TOLERANCE_PX || !p.title.includes(`${want.seconds} s`)) {
        wrong.push(`${p.pipeline}/${p.pass}: ${p.width}px for ${want.seconds} s ("${p.title}")`);
      }
    }
  });
  check(nested.length > 0 && wrong.length === 0,
        `timings: ${placeable.length} pass records nested under their stages, widths proportional ` +
        `(${wrong.slice(0, 3).join("; ")})`);
  const over = [];
  drawn.forEach((d, i) => {
    const mine = nested.filter((p) => p.row === i);
    const seconds = mine.reduce((a, p) => a + (p.seconds || 0), 0);  // unmatched passes failed above
    const pixels = mine.reduce((a, p) => a + p.width, 0);
    if (seconds > timings[i].seconds || pixels > d.wall + TOLERANCE_PX) {
      over.push(`${timings[i].stage}: passes ${seconds} s / ${pixels.toFixed(1)}px > ${timings[i].seconds} s / ${d.wall}px`);
    }
  });
  const withPasses = new Set(nested.map((p) => p.stage));
  check(over.length === 0, `timings: each stage's pass bars sum to no more than its own ` +
        `(${[...withPasses].join(", ")}) ${over.join("; ")}`);

  // The CPU code generator's parts, as the report records them, nested under codegen_cpu.
  const parts = ["llvm_ir", "optimize", "link", "machine_code"];
  const recorded = passes.filter((p) => p.pipeline === "codegen_cpu").map((p) => p.pass);
  const shownParts = nested.filter((p) => p.stage === "codegen_cpu").map((p) => p.pass);
  const hint = await page.$("#codegen-no-parts");
  check(JSON.stringify(recorded) === JSON.stringify(parts) && JSON.stringify(shownParts) === JSON.stringify(parts) &&
        hint === null,
        `timings: codegen_cpu is split into ${parts.join(", ")} (report: ${recorded.join(", ")}; ` +
        `chart: ${shownParts.join(", ")}${hint ? "; says it has no parts" : ""})`);
};
