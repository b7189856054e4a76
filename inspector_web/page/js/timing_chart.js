// The Timings panel's chart (#timing-chart): the compile's stages as bars of their wall time
// (a thinner bar below for CPU time where the report has it), each stage's pass records nested
// under it on the same scale. The nesting comes from the core (overview.timing_tree,
// core/timing_tree.h); this only draws it. Hover titles give the exact seconds.
coil.renderTimingChart = function (target, tree) {
  const el = coil.el;
  const WIDTH = 480;  // px for the longest wall or CPU time
  const stages = tree.stages;
  const max = Math.max(1e-12, ...stages.map((s) => Math.max(s.seconds, s.cpu_seconds)));
  const px = (s) => (WIDTH * s / max).toFixed(3) + 'px';
  const exact = (s) => `${s} s`;
  const chart = el('div', { id: 'timing-chart', 'data-scale-px-per-s': WIDTH / max });
  stages.forEach((s, i) => {
    const passSum = s.passes.reduce((a, p) => a + p.seconds, 0);
    let title = `${s.stage}: wall ${exact(s.seconds)}`;
    if (s.cpu_seconds) title += `, CPU ${exact(s.cpu_seconds)}`;
    if (s.passes.length) title += `; ${s.passes.length} passes ${exact(passSum)}`;
    const row = el('div', { class: 'timing-stage', 'data-stage': s.stage, 'data-timing-index': i,
                            'data-seconds': s.seconds, 'data-cpu-seconds': s.cpu_seconds, title }, [
      el('span', { class: 'timing-label' }, s.stage),
      el('span', { class: 'timing-bars' }, [
        el('span', { class: 'timing-bar wall', style: `width:${px(s.seconds)}` }),
        s.cpu_seconds ? el('span', { class: 'timing-bar cpu', style: `width:${px(s.cpu_seconds)}` }) : null,
      ]),
      el('span', { class: 'timing-value' }, coil.formatSeconds(s.seconds) +
        (s.cpu_seconds ? ` (CPU ${coil.formatSeconds(s.cpu_seconds)})` : '')),
    ]);
    chart.appendChild(row);
    if (!s.passes.length) return;
    const passes = el('div', { class: 'timing-passes', 'data-timing-index': i });
    let offset = 0;  // passes run one after another inside the stage: drawn in sequence
    for (const p of s.passes) {
      passes.appendChild(el('div', { class: 'timing-pass', 'data-pipeline': p.pipeline, 'data-pass': p.pass,
                                     'data-seconds': p.seconds,
                                     title: `${p.pipeline} / ${p.pass}: ${exact(p.seconds)}` +
                                            (s.stage.startsWith('codegen') ? ' (a part of code generation)' :
                                              p.changed ? ' (changed the graph)' : ' (no change)') }, [
        el('span', { class: 'timing-label' }, `${p.pipeline} · ${p.pass}`),
        el('span', { class: 'timing-bars' }, [
          el('span', { class: 'timing-bar pass' + (p.changed ? ' changed' : ''),
                       style: `margin-left:${px(offset)};width:${px(p.seconds)}` })]),
        el('span', { class: 'timing-value' }, coil.formatSeconds(p.seconds)),
      ]));
      offset += p.seconds;
    }
    chart.appendChild(passes);
  });
  target.appendChild(chart);
  // Code generators time their parts (llvm_ir, optimize, link, machine_code; cuda_source,
  // nvrtc); a report written before they did, or by a backend that times nothing, has none.
  const codegen = stages.filter((s) => s.stage.startsWith('codegen') && !s.passes.length);
  if (codegen.length) {
    target.appendChild(el('p', { class: 'hint', id: 'codegen-no-parts' }, `The report records no parts of ` +
      `${[...new Set(codegen.map((s) => s.stage))].join(', ')} (written before code generators timed them, ` +
      'or by a backend that times nothing), so it is one bar.'));
  }
  if (tree.unplaced.length) {
    target.appendChild(el('p', { class: 'hint' }, `${tree.unplaced.length} pass records name a stage ` +
      `with no timing row: ${tree.unplaced.map((p) => `${p.pipeline} · ${p.pass}`).slice(0, 10).join(', ')}`));
  }
};
