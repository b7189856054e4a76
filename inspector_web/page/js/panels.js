// The stage's side and tab panels: node details, summary, diff, stage info and timings.
'use strict';

// #node-details for one node: `doc` is a coil_node document's "node" (null: the hint).
// `onPick(index)` selects another node (a producer or a user). `more` (optional): {provenance
// (the coil_node document's), stage (the stage document), pickStageNode(stage, node),
// pickKernel(k)}: links to the node's ancestors and descendants on other stages, its kernel,
// and the rejected fusion decisions that name its kernel.
coil.renderNodeDetails = function (target, doc, onPick, more) {
  const el = coil.el;
  target.textContent = '';
  if (doc === null) {
    target.appendChild(el('p', { class: 'hint' },
      'Click a node to see its op, attributes, types and source location.'));
    if (more && more.stage) coil.renderGroups(target, more.stage, more.searchFor, more.graph);
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
      more ? el('span', { class: 'link mono', id: 'node-kernel-link', onclick: () => more.pickKernel(k.index) }, k.name) : k.name,
      ` (${k.kind}${k.extern_op ? ': ' + k.extern_op : ''})`])]);
  }
  // Saved for backward: the core marks the joint graph's node (doc.saved) and, on the forward
  // graph, the nodes it returns for the backward (the stage's saved_nodes).
  const ag = more && more.stage && more.stage.autograd;
  if (doc.saved || (ag && ag.saved_nodes.includes(doc.index))) kv.push(['autograd', 'saved for backward']);
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
  if (!more) return;
  // Provenance: the same name path (or source location) on the other stages.
  const p = more.provenance;
  const stages = p ? p.stages : [];
  target.appendChild(el('div', { class: 'section' }, p && p.key ?
    `provenance: "${p.key}" on ${stages.length} other stage${stages.length === 1 ? '' : 's'}` : 'provenance: none (no name or source location)'));
  const box = el('div', { id: 'node-provenance' });
  for (const st of stages) {
    const items = st.nodes.map((n) => [el('span', {
      class: 'link mono', 'data-stage': st.stage_key, 'data-node-id': n.id, title: n.op,
      onclick: () => more.pickStageNode(st.stage, n.index),
    }, coil.nodeLabel(n.op)), ' ']);
    if (st.total > st.nodes.length) items.push(`… ${st.total - st.nodes.length} more`);
    const kernels = st.kernels.map((k) => [el('span', { class: 'swatch', style: `background:${k.colour}` }),
      el('span', { class: 'link mono', 'data-kernel-name': k.name,
        onclick: () => { more.pickStageNode(st.stage, st.nodes[0].index); more.pickKernel(k.index); } }, k.name), ' ']);
    box.appendChild(el('div', { class: 'provenance', 'data-relation': st.relation, 'data-stage': st.stage_key }, [
      el('span', { class: 'stage-name' }, `${st.relation === 'earlier' ? '↑' : '↓'} ${st.title} (${st.total}): `),
      ...items, kernels.length ? el('span', {}, [' in ', ...kernels]) : '']));
  }
  target.appendChild(box);
  // Why the node's kernel did not fuse further: the rejected decisions that name it.
  const sched = more.stage && more.stage.schedule;
  if (doc.kernel && sched) {
    const rejected = sched.decisions.filter((d) => !d.accepted && d.final_kernels.includes(doc.kernel.index));
    target.appendChild(el('div', { class: 'section' }, `not fused (${rejected.length} rejected decisions)`));
    target.appendChild(el('ul', { id: 'node-rejections' }, rejected.slice(0, 12).map((d) =>
      el('li', {}, `${d.kind} ${d.kernels.join(' + ')}: ${d.reason}`))));
  }
};

// The stage's name path groups (under the node details hint; core/name_groups.h): every
// name path prefix two or more nodes share ("/blocks.0/attn/MatMul": "/blocks.0",
// "/blocks.0/attn"; capture's "blocks.0.attn": "blocks", "blocks.0"), nested, with node
// counts, in graph order, the first 60 of depth 0-2. A click on the path searches for it, highlighting its
// nodes; the button beside it collapses the group into one box in the graph or expands it.
coil.renderGroups = function (target, stage, searchFor, graph) {
  const el = coil.el, groups = stage.graph.groups || [];
  if (!groups.length) return;
  const shown = groups.filter((g) => g.depth < 3).slice(0, 60);
  const collapsed = graph ? graph.collapsed : new Set();
  target.appendChild(el('div', { class: 'section' },
    `name path groups (${groups.length}${groups.length > shown.length ? ', first 60 of depth < 3 shown' : ''}; ${collapsed.size} collapsed)`));
  target.appendChild(el('ul', { id: 'name-groups' }, shown.map((g, k) =>
    el('li', { style: `margin-left:${g.depth * 14}px` }, [
      graph ? el('button', {
        class: 'group-toggle', 'data-group-toggle': String(k),
        title: collapsed.has(k) ? 'expand: draw its nodes' : 'collapse into one box',
        onclick: () => (collapsed.has(k) ? graph.expand(k) : graph.collapse(k)),
      }, collapsed.has(k) ? '+' : '−') : '',
      el('span', { class: 'link mono', 'data-group': g.path, onclick: () => searchFor(g.path) }, g.path),
      ` (${g.nodes})`]))));
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

// The structural part of #stage-diff, above the op counts: name paths (provenance keys) only
// one of the two stages has, and the fused groups of a schedule stage (kernels computing more
// than one node, with the ops they merged). `onPickKernel(k)` shows kernel k of `after`.
coil.renderStructuralDiff = function (target, before, after, onPickKernel) {
  const el = coil.el;
  const keys = (doc) => {
    const m = new Map();
    for (const n of doc.graph.nodes) {
      const k = n.name || n.loc;
      if (k) m.set(k, (m.get(k) || 0) + 1);
    }
    return m;
  };
  const a = keys(before), b = keys(after);
  const gone = [...a.keys()].filter((k) => !b.has(k)), came = [...b.keys()].filter((k) => !a.has(k));
  const box = el('div', { id: 'structural-diff' });
  box.appendChild(el('h3', {}, 'Name paths'));
  box.appendChild(el('p', {}, `${a.size} in ${before.title}, ${b.size} in ${after.title}: ` +
    `${gone.length} only in ${before.title}, ${came.length} only in ${after.title}.`));
  for (const [list, what] of [[gone, `only in ${before.title}`], [came, `only in ${after.title}`]]) {
    if (list.length) box.appendChild(el('p', { class: 'hint' }, `${what}: ${list.slice(0, 20).join(', ')}${list.length > 20 ? ', …' : ''}`));
  }
  const s = after.schedule;
  if (s) {
    const groups = s.kernels.map((k, i) => ({ k, i })).filter(({ k }) => k.nodes.length > 1);
    box.appendChild(el('h3', {}, `Fused groups in ${after.title} (${groups.length} kernels computing more than one node)`));
    box.appendChild(el('div', { id: 'fused-groups' }, [coil.table(['', 'kernel', { text: 'nodes', num: true }, 'ops merged', 'name paths'],
      groups.map(({ k, i }) => {
        const names = [...new Set(k.nodes.map((n) => after.graph.nodes[n].name).filter((x) => x))];
        const ops = new Map();
        for (const n of k.nodes) { const op = coil.nodeLabel(after.graph.nodes[n].op); ops.set(op, (ops.get(op) || 0) + 1); }
        return [{ node: el('span', { class: 'swatch', style: `background:${k.colour}` }) },
          { node: el('span', { class: 'link mono', onclick: () => onPickKernel(i) }, k.name) },
          { text: String(k.nodes.length), num: true },
          [...ops].map(([op, c]) => (c > 1 ? `${op}×${c}` : op)).join(' '),
          names.slice(0, 4).join(', ') + (names.length > 4 ? ', …' : '')];
      }))]));
  }
  // Right under the heading: the structure says more than the op counts below it.
  target.insertBefore(box, target.children[1] || null);
};

// #stage-info: guards, graph breaks, recompiles, saved tensors, fusion decisions, problems.
// `onPickKernel(k)` shows kernel k (a decision's link).
coil.renderInfo = function (target, stage, onPickKernel) {
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
    target.appendChild(el('p', { id: 'capture-compile' }, c.compile > 1 ?
      `These graphs are compile ${c.compile} of ${c.compile} (the latest; ${c.recompiles.length} recompile${c.recompiles.length === 1 ? '' : 's'}, ` +
      `the last because ${c.recompiles[c.recompiles.length - 1].reason}).` : 'These graphs are the function\'s only compile.'));
    target.appendChild(el('h3', {}, `Graph breaks (${c.breaks.length})`));
    target.appendChild(c.breaks.length ? coil.table(['after graph', 'reason', 'op', 'source'],
      c.breaks.map((b) => [String(b.after_graph), b.reason, b.op, b.loc])) : el('p', { class: 'hint' }, 'none: one graph'));
    target.appendChild(el('h3', {}, `Guards (${c.guards.length})`));
    target.appendChild(coil.table(['guard', 'reason', 'source'], c.guards.map((x) =>
      [el('code', {}, x.text), x.relation ? x.reason : 'checked at call (dtype, shape, value)', x.loc])));
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
    // Filters: text (pass, kind, kernel or reason), accepted or rejected, kind; each decision
    // links to the final kernels its kernels ended up in (core DecisionKernels).
    const text = el('input', { id: 'decision-filter', type: 'search', placeholder: 'filter: kernel, reason, pass…' });
    const verdict = el('select', { id: 'decision-verdict' }, [['all', 'accepted and rejected'], ['yes', 'accepted'], ['no', 'rejected']]
      .map(([v, t]) => el('option', { value: v }, t)));
    const kinds = [...new Set(s.decisions.map((d) => d.kind))].sort();
    const kind = el('select', { id: 'decision-kind' }, [el('option', { value: '' }, 'every kind'),
      ...kinds.map((k) => el('option', { value: k }, k))]);
    const count = el('span', { id: 'decision-count', class: 'hint' });
    target.appendChild(el('div', { class: 'filters' }, [text, verdict, kind, count]));
    const holder = el('div', { id: 'decision-table' });
    target.appendChild(holder);
    const draw = () => {
      const q = text.value.trim().toLowerCase();
      const rows = s.decisions.filter((d) =>
        (verdict.value === 'all' || (d.accepted ? 'yes' : 'no') === verdict.value) &&
        (!kind.value || d.kind === kind.value) &&
        (!q || [d.pass, d.kind, d.reason, ...d.kernels, ...d.final_kernels.map((k) => s.kernels[k].name)]
          .some((x) => x.toLowerCase().includes(q))));
      count.textContent = `${rows.length} of ${s.decisions.length}`;
      holder.textContent = '';
      holder.appendChild(coil.table(['pass', 'kind', 'kernels', 'in kernel', 'accepted', 'reason', { text: 'bytes saved', num: true }],
        rows.map((d) => [d.pass, d.kind, d.kernels.join(', '),
          { node: el('span', {}, d.final_kernels.map((k) => [el('span', { class: 'swatch', style: `background:${s.kernels[k].colour}` }),
            el('span', { class: 'link mono', 'data-kernel': k, onclick: () => onPickKernel && onPickKernel(k) }, s.kernels[k].name), ' '])) },
          d.accepted ? 'yes' : 'no', d.reason, { text: coil.formatBytes(d.bytes_saved_hint), num: true }])));
    };
    for (const c of [text, verdict, kind]) c.addEventListener(c === text ? 'input' : 'change', draw);
    draw();
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
    coil.renderTimingChart(target, overview.timing_tree);
    target.appendChild(coil.table(['step', { text: 'time', num: true }, ''],
      rows.map(([name, s]) => [name, { text: coil.formatSeconds(s), num: true }, bar(s)])));
  } else {
    target.appendChild(el('p', { class: 'hint' }, 'This file records no timings.'));
  }
  target.appendChild(el('h3', {}, 'Stage artifacts'));
  // A stage's time is never exactly 0: 0 means the writer did not record it.
  target.appendChild(coil.table(['stage', { text: 'time', num: true }, ''],
    overview.artifacts.map((a) => [a.stage, { text: a.seconds ? coil.formatSeconds(a.seconds) : 'not recorded', num: true },
      a.seconds ? bar(a.seconds) : ''])));
  if (overview.options.length) {
    target.appendChild(el('h3', {}, 'Options'));
    target.appendChild(coil.table(['option', 'value'], overview.options.map(([k, v]) => [k, v])));
  }
  if (overview.logs.length) {
    target.appendChild(el('h3', {}, `Logs (${overview.logs.length})`));
    target.appendChild(coil.table(['channel', 'text'], overview.logs.map((l) => [l.channel, el('code', {}, l.text)])));
  }
};
