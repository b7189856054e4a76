// #compare (the Compare panel): the open report against a second compile (another
// `coil compile --dump` of the model: other options, another backend, another coil), as
// core/compare.h computes it: options that differ, stages side by side (node counts, op counts
// that changed, name paths only one side has), stage timings and pass records with their
// deltas, the kernels only one side has (matched by the nodes they compute, so renumbering is
// no change) with the other side's kernels sharing their nodes, and the fusion decisions only
// one side made. The second file comes from the file picker (#compare-input) or, served by
// `coil inspect`, from the served files (#compare-select).
//
// Elements tests read: #compare-summary; #compare-stages tr[data-key]; #compare-timings
// tr[data-stage] (td.a, td.b, td.delta); #compare-passes tr[data-pass]; #compare-kernels-a and
// #compare-kernels-b tr[data-kernel=INDEX][data-name=NAME]; #compare-decisions-a/-b rows;
// #compare-error (a file that failed to load: the previous comparison stays).
'use strict';

coil.renderCompare = function (target, state, handlers) {
  const el = coil.el;
  const { fileName, served, doc, error } = state;
  target.textContent = '';
  target.appendChild(el('h2', {}, 'Compare two compiles'));
  const input = el('input', { type: 'file', id: 'compare-input', accept: '.pb,application/octet-stream', hidden: true });
  input.addEventListener('change', () => {
    if (input.files.length) handlers.onFile(input.files[0]);
    input.value = '';
  });
  const bar = el('p', { class: 'compare-bar' }, [`${fileName} (a) with (b): `,
    el('label', { class: 'button', for: 'compare-input', title: 'a report.pb of another compile' }, 'Choose file…'), input]);
  const others = (served || []).filter((f) => f !== fileName);
  if (others.length) {
    const select = el('select', { id: 'compare-select' }, [el('option', { value: '' }, 'or a served file…'),
      others.map((f) => el('option', { value: f }, f))]);
    select.addEventListener('change', () => { if (select.value) handlers.onServed(select.value); });
    bar.appendChild(select);
  }
  target.appendChild(bar);
  if (error) target.appendChild(el('p', { id: 'compare-error', class: 'error-text', role: 'alert' }, error));
  if (!doc) {
    target.appendChild(el('p', { class: 'hint' },
      'Choose the report of another compile of this model (other options, another backend, before and after a change) ' +
      'to see which stages, kernels, fusion decisions and timings differ.'));
    return;
  }
  const a = `a: ${doc.a}`, b = `b: ${doc.b}`;
  const k = doc.kernels, d = doc.decisions;
  target.appendChild(el('p', { id: 'compare-summary' },
    `${a}${doc.a_model ? ' (' + doc.a_model + ')' : ''} against ${b}${doc.b_model ? ' (' + doc.b_model + ')' : ''}. ` +
    `Kernels (${k.a_stage || 'no schedule'} vs ${k.b_stage || 'no schedule'}): ${k.a_count} and ${k.b_count}, ` +
    `${k.same} computing the same nodes, ${k.a_count - k.same} only in a, ${k.b_count - k.same} only in b. ` +
    `Fusion decisions: ${d.a_accepted} accepted / ${d.a_rejected} rejected in a, ${d.b_accepted} / ${d.b_rejected} in b.`));

  if (doc.options.length) {
    target.appendChild(el('h3', {}, 'Options that differ'));
    const t = coil.table(['option', 'a', 'b'], doc.options.map(([key, va, vb]) => [key, va, vb]));
    t.id = 'compare-options';
    target.appendChild(t);
  }

  target.appendChild(el('h3', {}, 'Stages'));
  const nodes = (n) => ({ text: n < 0 ? '—' : String(n), num: true });
  const stages = coil.table(['stage', { text: 'nodes a', num: true }, { text: 'nodes b', num: true },
    'op counts that changed (a → b)', 'name paths only in a / only in b'],
  doc.stages.map((s) => [el('span', { class: 'mono' }, s.key), nodes(s.a_nodes), nodes(s.b_nodes),
    s.a_nodes < 0 ? 'only in b' : s.b_nodes < 0 ? 'only in a' :
      s.ops.map(([op, x, y]) => `${coil.nodeLabel(op)} ${x}→${y}`).join(', ') || 'same',
    s.a_nodes < 0 || s.b_nodes < 0 ? '' : `${s.only_a} / ${s.only_b}` +
      (s.only_a + s.only_b ? ` (${[...s.only_a_names.slice(0, 3).map((n) => '−' + n), ...s.only_b_names.slice(0, 3).map((n) => '+' + n)].join(', ')}${s.only_a + s.only_b > 6 ? ', …' : ''})` : '')]),
  (i) => (doc.stages[i].a_nodes < 0 ? 'added' : doc.stages[i].b_nodes < 0 ? 'removed' : null));
  stages.id = 'compare-stages';
  [...stages.tBodies[0].rows].forEach((r, i) => { r.dataset.key = doc.stages[i].key; });
  target.appendChild(stages);

  // Timings: seconds as recorded (exact in the title), the change and the ratio.
  const secondsCell = (s, cls) => ({ node: el('span', { title: s === null ? 'no such row' : `${s} s` },
    s === null ? '—' : coil.formatSeconds(s)), num: true, class: cls });
  const timingTable = (rows, label, id, key) => {
    const t = coil.table([label, { text: 'a', num: true }, { text: 'b', num: true }, { text: 'b − a', num: true },
      { text: 'b / a', num: true }], rows.map((r) => [el('span', { class: 'mono' }, r.label), secondsCell(r.a, 'a'),
      secondsCell(r.b, 'b'),
      { text: r.a === null || r.b === null ? '' : (r.b >= r.a ? '+' : '−') + coil.formatSeconds(Math.abs(r.b - r.a)), num: true, class: 'delta' },
      { text: r.a && r.b !== null ? (r.b / r.a).toFixed(2) + '×' : '', num: true, class: 'ratio' }]));
    t.id = id;
    [...t.tBodies[0].rows].forEach((tr, i) => { tr.dataset[key] = rows[i].label; });
    return t;
  };
  target.appendChild(el('h3', {}, 'Stage timings'));
  target.appendChild(doc.timings.length ? timingTable(doc.timings.map((t) => ({ label: t.stage, a: t.a, b: t.b })),
    'stage', 'compare-timings', 'stage') : el('p', { class: 'hint' }, 'neither report records stage timings'));
  if (doc.passes.length) {
    target.appendChild(el('h3', {}, 'Passes'));
    target.appendChild(timingTable(doc.passes.map((p) => ({ label: `${p.pipeline}/${p.pass}`, a: p.a, b: p.b })),
      'pipeline/pass', 'compare-passes', 'pass'));
  }

  // Kernels only one side has. a's kernels link to the open report's schedule stage.
  const kernelTable = (list, side, otherSide, id) => {
    const t = coil.table(['kernel', { text: 'nodes', num: true }, 'ops', 'name paths', `${otherSide}'s kernels with its nodes`],
      list.map((x) => [side === 'a' && handlers.onKernel ?
        { node: el('span', { class: 'link mono', onclick: () => handlers.onKernel(k.a_stage, x.index) }, x.name) } :
        { node: el('span', { class: 'mono' }, x.name) },
      { text: String(x.nodes), num: true }, x.ops.map((op) => coil.nodeLabel(op)).join(' '),
      x.names.slice(0, 4).join(', ') + (x.names.length > 4 ? ', …' : ''),
      x.other.length ? x.other.map((o) => `#${o}`).join(', ') : 'none']));
    t.id = id;
    [...t.tBodies[0].rows].forEach((tr, i) => { tr.dataset.kernel = String(list[i].index); tr.dataset.name = list[i].name; });
    return t;
  };
  target.appendChild(el('h3', {}, `Kernels only in a (${k.a_count - k.same})`));
  target.appendChild(kernelTable(k.only_a, 'a', 'b', 'compare-kernels-a'));
  target.appendChild(el('h3', {}, `Kernels only in b (${k.b_count - k.same})`));
  target.appendChild(kernelTable(k.only_b, 'b', 'a', 'compare-kernels-b'));

  const decisionTable = (list, id) => {
    const t = coil.table(['pass', 'kind', 'kernels', 'outcome', 'reason'], list.map((x) =>
      [x.pass, x.kind, el('span', { class: 'mono' }, x.kernels.join(' + ')), x.accepted ? 'fused' : 'rejected', x.reason]),
    (i) => (list[i].accepted ? null : 'rejected'));
    t.id = id;
    return t;
  };
  target.appendChild(el('h3', {}, `Fusion decisions only in a (${d.only_a.length}) and only in b (${d.only_b.length})`));
  target.appendChild(decisionTable(d.only_a, 'compare-decisions-a'));
  target.appendChild(decisionTable(d.only_b, 'compare-decisions-b'));
};
