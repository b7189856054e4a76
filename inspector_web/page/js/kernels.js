// The Kernels panel: the schedule's kernels as fusion groups (#kernel-table) and the generated
// source of a KernelModule with syntax highlighting (#kernel-source).
'use strict';

// Returns a function that shows kernel k (null when the stage has no schedule).
coil.renderKernels = function (tableTarget, sourceTarget, stage, onPickNode) {
  const el = coil.el;
  tableTarget.textContent = '';
  sourceTarget.textContent = '';
  const s = stage.schedule;
  if (!s) {
    tableTarget.appendChild(el('p', { class: 'hint' },
      'This stage has no schedule: kernels appear from the inductor stage on.'));
    sourceTarget.appendChild(el('p', { class: 'hint' }, 'No generated code in this stage.'));
    return null;
  }
  // The generated code first (a KernelModule), with a picker; the kernel table names link to it.
  const km = stage.kernel_module;
  let showSource = null;  // kernel index -> shows its source, when the module has it
  if (!km) {
    sourceTarget.appendChild(el('p', { class: 'hint' },
      'No generated code in this stage (a Schedule): the code generator\'s stage shows it.'));
  } else {
    sourceTarget.appendChild(el('h2', {}, `Generated code (${km.backend}${km.target_triple ? ', ' + km.target_triple : ''}${km.cpu ? ', ' + km.cpu : ''})`));
    sourceTarget.appendChild(el('p', { class: 'hint' }, `object code ${coil.formatBytes(km.object_bytes)}; ` +
      `${km.kernels.length} kernels; compiler ${km.compiler_version || '?'}`));
    const sources = km.kernels.map((k) => ({ label: `${k.name} (${k.symbol})`, doc: k }));
    if (km.wrapper.source) sources.push({ label: `wrapper (${km.wrapper.symbol})`, doc: km.wrapper });
    if (sources.length === 0) {
      sourceTarget.appendChild(el('p', { class: 'hint' }, 'The module carries no source text.'));
    } else {
      const pick = el('select', { id: 'source-select' }, sources.map((x, i) => el('option', { value: i }, x.label)));
      const pre = el('pre', { class: 'source lang-' + km.language });
      const show = () => { pre.innerHTML = coil.highlight(sources[Number(pick.value)].doc); };
      pick.addEventListener('change', show);
      sourceTarget.appendChild(el('div', { class: 'source-pick' }, ['source: ', pick]));
      sourceTarget.appendChild(pre);
      show();
      showSource = (kernelIndex) => {
        const at = km.kernels.findIndex((k) => k.kernel_index === kernelIndex);
        if (at < 0) return false;
        pick.value = String(at);
        show();
        sourceTarget.scrollIntoView();
        return true;
      };
    }
  }
  tableTarget.appendChild(el('h2', {}, `Kernels (${s.kernels.length}, ${s.kernels.filter((k) => k.kind === 'extern').length} extern)`));
  tableTarget.appendChild(coil.table(['', 'kernel', 'kind', 'graph nodes', 'ops', 'ranges',
    { text: 'bytes moved', num: true }],
  s.kernels.map((k, i) => [
    { node: el('span', { class: 'swatch', style: `background:${k.colour}` }) },
    showSource ? { node: el('span', { class: 'link', onclick: () => showSource(i) }, k.name) } : k.name,
    k.kind + (k.extern_op ? ': ' + k.extern_op : ''),
    { node: el('span', {}, k.nodes.slice(0, 12).map((n) => [el('span', { class: 'link mono', onclick: () => onPickNode(n) },
      stage.graph.nodes[n].id), ' ']).concat(k.nodes.length > 12 ? [`… ${k.nodes.length - 12} more`] : [])) },
    k.ops.join(', '), el('code', {}, k.ranges),
    { text: coil.formatBytes(k.bytes_moved_hint), num: true }])));
  const rows = tableTarget.querySelectorAll('tbody tr');
  rows.forEach((tr, i) => { tr.dataset.kernel = String(i); });
  // Shows kernel k: its row marked and scrolled to, and its source when the module has it.
  return (k) => {
    rows.forEach((tr, i) => tr.classList.toggle('picked', i === k));
    if (!(showSource && showSource(k)) && rows[k]) rows[k].scrollIntoView({ block: 'center' });
  };
};

// HTML of `doc.source` with doc.tokens ([start, length, kind] triples, UTF-16 offsets, from
// the C++ tokenizer) wrapped in <span class="tk-KIND">.
coil.highlight = function (doc) {
  const src = doc.source, t = doc.tokens, out = [];
  let at = 0;
  for (let i = 0; i + 2 < t.length; i += 3) {
    const start = t[i], end = t[i] + t[i + 1];
    if (start < at) continue;
    out.push(coil.escape(src.slice(at, start)));
    out.push(`<span class="tk-${t[i + 2]}">${coil.escape(src.slice(start, end))}</span>`);
    at = end;
  }
  out.push(coil.escape(src.slice(at)));
  return out.join('');
};
