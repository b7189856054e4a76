// The stage's side and tab panels: node details, summary, diff, stage info and timings.
'use strict';

// #node-details for one node: `doc` is a coil_node document's "node" (null: the hint).
// `onPick(index)` selects another node (a producer or a user).
coil.renderNodeDetails = function (target, doc, onPick) {
  const el = coil.el;
  target.textContent = '';
  if (doc === null) {
    target.appendChild(el('p', { class: 'hint' },
      'Click a node to see its op, attributes, types and source location.'));
    return;
  }
  const link = (index, id) => el('span', { class: 'link mono', onclick: () => onPick(index) }, id);
  target.appendChild(el('h3', { class: 'op' }, doc.op));
  const kv = [['id', doc.id], ['index', String(doc.index)]];
  if (doc.name) kv.push(['name', doc.name]);
  kv.push(['source', doc.loc || '(none)']);
  if (doc.kernel) {
    const k = doc.kernel;
    kv.push(['kernel', el('span', {}, [el('span', { class: 'swatch', style: `background:${k.colour}` }),
      `${k.name} (${k.kind}${k.extern_op ? ': ' + k.extern_op : ''})`])]);
  }
  if (doc.saved) kv.push(['autograd', 'saved for backward']);
  target.appendChild(el('dl', { class: 'kv' }, kv.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)])));
  const valueText = (v) => '%' + v.value + (v.name ? ` "${v.name}"` : '');
  target.appendChild(el('div', { class: 'section' }, `inputs (${doc.inputs.length})`));
  target.appendChild(el('table', { class: 'inputs' }, doc.inputs.map((v) => el('tr', {}, [
    el('td', {}, valueText(v)), el('td', { class: 'type' }, v.type),
    el('td', {}, v.def === 'node' ? link(v.node, v.node_id) : v.def)]))));
  target.appendChild(el('div', { class: 'section' }, `outputs (${doc.outputs.length})`));
  target.appendChild(el('table', { class: 'outputs' }, doc.outputs.map((v) => el('tr', {}, [
    el('td', {}, valueText(v)), el('td', { class: 'type' }, v.type),
    el('td', {}, v.graph_output ? 'graph output' : '')]))));
  target.appendChild(el('div', { class: 'section' }, `attributes (${doc.attrs.length})`));
  target.appendChild(el('table', { class: 'attrs' }, doc.attrs.map(([k, v]) =>
    el('tr', {}, [el('td', {}, k), el('td', {}, v)]))));
  target.appendChild(el('div', { class: 'section' }, `users (${doc.users.length})`));
  target.appendChild(el('div', {}, doc.users.map((u) => [link(u.node, u.node_id), ' '])));
};

// The label drawn in a node's box: the op without its namespace ("aten.add" -> "add"), as
// the C++ layout measured it (core/graph_json.cc NodeLabel).
coil.nodeLabel = function (op) {
  const dot = op.indexOf('.');
  return dot < 0 || dot + 1 === op.length ? op : op.slice(dot + 1);
};

// #stage-summary: counts and the op histogram.
coil.renderSummary = function (target, stage) {
  const el = coil.el, s = stage.summary, g = stage.graph;
  target.textContent = '';
  target.appendChild(el('h2', {}, `${stage.title}: ${s.nodes} nodes`));
  target.appendChild(el('dl', { class: 'kv' }, [
    ['graph', g.name || '(unnamed)'], ['nodes', s.nodes], ['inputs', s.inputs],
    ['constants', `${s.constants} (${coil.formatBytes(s.constant_bytes)})`], ['outputs', s.outputs],
    ['layout', `${g.layout.layers} layers, ${g.layout.crossings} edge crossings`],
  ].flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, String(v))])));
  const max = Math.max(1, ...s.ops.map((o) => o[1]));
  target.appendChild(el('h3', {}, 'Nodes by op'));
  target.appendChild(coil.table(['op', { text: 'count', num: true }, ''],
    s.ops.map(([op, c]) => [op, { text: String(c), num: true },
      { node: el('span', { class: 'bar', style: `width:${Math.round(200 * c / max)}px` }) }])));
  if (g.symbols.length) {
    target.appendChild(el('h3', {}, 'Shape symbols'));
    target.appendChild(coil.table(['symbol', 'min', 'max', 'hint'],
      g.symbols.map((x) => [x.name, String(x.min), x.max ? String(x.max) : '∞', x.hint ? String(x.hint) : '-'])));
  }
};

// #stage-diff: ops removed and added against another stage (`other` is a coil_diff result).
coil.renderDiff = function (target, stages, current, otherIndex, diffDoc, onPickOther) {
  const el = coil.el;
  target.textContent = '';
  const pick = el('select', { id: 'diff-against' }, stages.map((s, i) =>
    el('option', { value: i, selected: i === otherIndex }, s.title + ` (${s.node_count} nodes)`)));
  pick.addEventListener('change', () => onPickOther(Number(pick.value)));
  target.appendChild(el('h2', {}, ['Ops in ', pick, ` → ${stages[current].title}`]));
  if (!diffDoc) {
    target.appendChild(el('p', { class: 'hint' }, 'This is the only stage; there is nothing to compare with.'));
    return;
  }
  const d = diffDoc.diff;
  target.appendChild(el('p', {}, [el('b', {}, `${d.removed.length} ops removed`), ': ',
    d.removed.join(', ') || 'none']));
  target.appendChild(el('p', {}, [el('b', {}, `${d.added.length} ops added`), ': ',
    d.added.join(', ') || 'none']));
  const rows = d.rows.map(([op, a, b]) => [op, { text: String(a), num: true }, { text: String(b), num: true },
    { text: (b - a > 0 ? '+' : '') + (b - a), num: true }]);
  target.appendChild(coil.table(['op', { text: 'before', num: true }, { text: 'after', num: true },
    { text: 'change', num: true }], rows, (i) => {
    const [, a, b] = d.rows[i];
    return a > 0 && b === 0 ? 'removed' : a === 0 && b > 0 ? 'added' : null;
  }));
};

// #stage-info: guards, graph breaks, recompiles, saved tensors, fusion decisions, problems.
coil.renderInfo = function (target, stage) {
  const el = coil.el;
  target.textContent = '';
  target.appendChild(el('h2', {}, stage.title));
  const g = stage.graph;
  if (g.problems.length) {
    target.appendChild(el('h3', {}, 'Problems in this graph'));
    target.appendChild(el('ul', {}, g.problems.map((p) => el('li', {}, p))));
  }
  if (stage.capture) {
    const c = stage.capture;
    target.appendChild(el('h3', {}, `Graph breaks (${c.breaks.length})`));
    target.appendChild(c.breaks.length ? coil.table(['after graph', 'reason', 'op', 'source'],
      c.breaks.map((b) => [String(b.after_graph), b.reason, b.op, b.loc])) : el('p', { class: 'hint' }, 'none: one graph'));
    target.appendChild(el('h3', {}, `Guards (${c.guards.length})`));
    target.appendChild(coil.table(['guard', 'reason', 'source'], c.guards.map((x) => [el('code', {}, x.text), x.reason, x.loc])));
    if (c.recompiles.length) {
      target.appendChild(el('h3', {}, `Recompiles (${c.recompiles.length})`));
      target.appendChild(coil.table(['failed guard', { text: 'compiles', num: true }],
        c.recompiles.map((r) => [r.reason, { text: String(r.count), num: true }])));
    }
  }
  if (g.guards.length) {
    target.appendChild(el('h3', {}, `Graph guards (${g.guards.length})`));
    target.appendChild(coil.table(['guard', 'reason', 'source'], g.guards.map((x) => [el('code', {}, x.text), x.reason, x.loc])));
  }
  if (stage.autograd) {
    const a = stage.autograd;
    target.appendChild(el('h3', {}, `Saved for backward (${a.saved_values.length} values, ${coil.formatBytes(a.saved_bytes)})`));
    target.appendChild(el('p', { class: 'hint' }, 'Saved values are marked with a dashed border on the joint graph.'));
    target.appendChild(coil.table(['value', 'type'], a.saved_values.map((v) => ['%' + v.value, v.type])));
  }
  if (stage.schedule) {
    const s = stage.schedule, st = s.stats;
    target.appendChild(el('h3', {}, 'Schedule'));
    target.appendChild(el('dl', { class: 'kv' }, [
      ['kernels', `${st.kernels_unfused} unfused → ${st.kernels} (${st.externs} extern)`],
      ['bytes moved', `${coil.formatBytes(st.bytes_moved_unfused_hint)} → ${coil.formatBytes(st.bytes_moved_hint)} (at the symbols' hints)`],
    ].flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)])));
    target.appendChild(el('h3', {}, `Fusion decisions (${s.decisions.length})`));
    target.appendChild(coil.table(['pass', 'kind', 'kernels', 'accepted', 'reason', { text: 'bytes saved', num: true }],
      s.decisions.map((d) => [d.pass, d.kind, d.kernels.join(', '), d.accepted ? 'yes' : 'no', d.reason,
        { text: coil.formatBytes(d.bytes_saved_hint), num: true }])));
  }
  if (!g.problems.length && !stage.capture && !stage.autograd && !stage.schedule && !g.guards.length) {
    target.appendChild(el('p', { class: 'hint' }, 'No guards, graph breaks, saved tensors or schedule in this stage.'));
  }
};

// #timings: the report's timings and each stage artifact's time, plus its logs.
coil.renderTimings = function (target, overview) {
  const el = coil.el;
  target.textContent = '';
  target.appendChild(el('h2', {}, 'Timings'));
  const rows = overview.timings.map((t) => [t.stage, t.seconds]);
  const max = Math.max(1e-9, ...rows.map((r) => r[1]), ...overview.artifacts.map((a) => a.seconds));
  const bar = (s) => ({ node: el('span', { class: 'bar', style: `width:${Math.round(240 * s / max)}px` }) });
  if (rows.length) {
    target.appendChild(coil.table(['step', { text: 'time', num: true }, ''],
      rows.map(([name, s]) => [name, { text: coil.formatSeconds(s), num: true }, bar(s)])));
  } else {
    target.appendChild(el('p', { class: 'hint' }, 'This file records no timings.'));
  }
  target.appendChild(el('h3', {}, 'Stage artifacts'));
  target.appendChild(coil.table(['stage', { text: 'time', num: true }, ''],
    overview.artifacts.map((a) => [a.stage, { text: coil.formatSeconds(a.seconds), num: true }, bar(a.seconds)])));
  if (overview.options.length) {
    target.appendChild(el('h3', {}, 'Options'));
    target.appendChild(coil.table(['option', 'value'], overview.options.map(([k, v]) => [k, v])));
  }
  if (overview.logs.length) {
    target.appendChild(el('h3', {}, `Logs (${overview.logs.length})`));
    target.appendChild(coil.table(['channel', 'text'], overview.logs.map((l) => [l.channel, el('code', {}, l.text)])));
  }
};
