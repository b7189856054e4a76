// The Memory plan panel (#memory-plan): each arena buffer as a rectangle, kernel index (program
// order) across, arena offset down, with sizes at concrete symbol values: those typed in the
// panel's fields, else the compile's --dim values, the symbols' hints or their minimum
// (`memory` is the core's coil_memory document, core/memory_json.h).
'use strict';

coil.renderMemoryPlan = function (target, stage, memory, onValues) {
  const el = coil.el;
  target.textContent = '';
  const s = stage.schedule;
  if (!s || !memory) {
    target.appendChild(el('p', { class: 'hint' }, 'This stage has no memory plan: it appears with the schedule (inductor).'));
    return;
  }
  const mp = s.memory_plan;
  const at = memory.symbols.map((x) => `${x.name}=${x.value}`).join(', ');
  const from = { typed: 'typed', dim: 'the compile\'s --dim', hint: 'hint', minimum: 'minimum: no hint or --dim' };
  target.appendChild(el('h2', {}, 'Memory plan'));
  // One field per shape symbol; Enter or leaving the field redraws at the values typed.
  if (memory.symbols.length) {
    const fields = memory.symbols.map((x) => el('input', {
      class: 'symbol-value', 'data-symbol': x.name, type: 'number', min: '0', value: String(x.value),
      title: `${x.name} (${from[x.from]})`,
    }));
    const apply = () => onValues(fields.filter((f) => f.value !== '').map((f) => `${f.dataset.symbol}=${f.value}`).join(','));
    for (const f of fields) {
      f.addEventListener('change', apply);
      f.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') apply(); });
    }
    target.appendChild(el('div', { class: 'filters', id: 'memory-symbols' }, ['sizes at ',
      ...memory.symbols.flatMap((x, i) => [`${x.name} = `, fields[i], el('span', { class: 'hint' }, ` (${from[x.from]}) `)])]));
  }
  for (const e of memory.errors) target.appendChild(el('p', { class: 'error-line' }, e));
  const size = (v) => (v === null ? 'not evaluable' : coil.formatBytes(v));
  target.appendChild(el('dl', { class: 'kv' }, [
    ['arena', `${mp.arena_bytes || '0'} = ${size(memory.arena_bytes)}${at ? ' at ' + at : ''}`],
    ['peak live', size(memory.peak_live_bytes)],
  ].flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)])));

  const byId = new Map(s.buffers.map((b, i) => [b.id, { b, m: memory.buffers[i] }]));
  const arena = s.buffers.filter((b) => b.kind === 'intermediate');
  const drawn = arena.map((b) => ({ b, m: byId.get(b.id).m }))
    .filter(({ b, m }) => m.offset !== null && m.size !== null && b.first >= 0);
  const K = Math.max(1, s.kernels.length);
  const top = Math.max(1, memory.arena_bytes || 0, ...drawn.map(({ m }) => m.offset + m.size));
  const W = Math.max(600, Math.min(1600, K * 24)), H = 360, left = 70, pad = 20;
  const x = (k) => left + (k / K) * W, y = (bytes) => pad + (bytes / top) * H;
  const parts = [`<svg width="${left + W + pad}" height="${H + 2 * pad + 20}" xmlns="http://www.w3.org/2000/svg">`];
  for (let t = 0; t <= 4; ++t) {
    const b = (top * t) / 4;
    parts.push(`<text class="axis" x="4" y="${y(b) + 4}">${coil.escape(coil.formatBytes(Math.round(b)))}</text>` +
      `<line x1="${left}" x2="${left + W}" y1="${y(b)}" y2="${y(b)}" stroke="#eee"/>`);
  }
  parts.push(`<text class="axis" x="${left}" y="${H + 2 * pad + 12}">kernel 0</text>` +
    `<text class="axis" x="${left + W - 60}" y="${H + 2 * pad + 12}">kernel ${K - 1}</text>`);
  const writer = new Map();  // buffer id -> index of the first kernel writing it
  s.kernels.forEach((k, i) => k.writes.forEach((b) => { if (!writer.has(b)) writer.set(b, i); }));
  const nameOf = (id) => { const e = byId.get(id); return e ? e.b.name || `buffer ${id}` : `buffer ${id}`; };
  for (const { b, m } of drawn) {
    const colour = writer.has(b.id) ? s.kernels[writer.get(b.id)].colour : '#999';
    const tip = `${b.name}: ${b.dtype}${b.shape}, ${coil.formatBytes(m.size)} at offset ${m.offset}` +
      ` (${b.offset}); live kernels ${b.first}..${b.last}` + (b.reuses ? `; reuses ${nameOf(b.reuses)}` : '') +
      (b.in_place ? ' (in place)' : '');
    const rx = x(b.first), ry = y(m.offset), rw = Math.max(1, x(b.last + 1) - x(b.first));
    const rh = Math.max(1, y(m.offset + m.size) - y(m.offset));
    parts.push(`<rect class="buffer-rect" data-buffer="${b.id}" x="${rx}" y="${ry}" width="${rw}" height="${rh}" ` +
      `fill="${colour}" fill-opacity="0.6"><title>${coil.escape(tip)}</title></rect>`);
    // A label where the rectangle has room for one.
    if (rw > 40 && rh > 12) {
      parts.push(`<text class="buffer-label" x="${rx + 3}" y="${ry + Math.min(rh - 3, 12)}">${coil.escape(b.name)}</text>`);
    }
  }
  parts.push('</svg>');
  const holder = el('div', { id: 'memory-chart', 'data-buffers': String(drawn.length),
    'data-arena-bytes': memory.arena_bytes === null ? '' : String(memory.arena_bytes) });
  holder.innerHTML = parts.join('');
  target.appendChild(holder);
  target.appendChild(el('h3', {}, `Buffers (${s.buffers.length}; ${arena.length} in the arena)`));
  target.appendChild(coil.table(['buffer', 'kind', 'type', 'size', 'arena offset', 'live (kernels)', 'reuses'],
    s.buffers.map((b, i) => {
      const m = memory.buffers[i];
      return [b.name || String(b.id), b.kind, el('code', {}, b.dtype + b.shape),
        el('code', {}, `${b.size}${m.size !== null ? ' = ' + coil.formatBytes(m.size) : ''}`),
        el('code', {}, b.offset ? `${b.offset}${m.offset !== null ? ' = ' + m.offset : ''}` : '-'),
        b.first >= 0 ? `${b.first}..${b.last}` : 'unused',
        // Schedule.buffers' reuses is a buffer id: shown by that buffer's name.
        (b.reuses ? nameOf(b.reuses) : '') + (b.in_place ? ' in place' : '')];
    })));
};
