// The Memory plan panel (#memory-plan): each arena buffer as a rectangle, kernel index (program
// order) across, arena offset down, sizes at the shape symbols' hints.
'use strict';

coil.renderMemoryPlan = function (target, stage) {
  const el = coil.el;
  target.textContent = '';
  const s = stage.schedule;
  if (!s) {
    target.appendChild(el('p', { class: 'hint' }, 'This stage has no memory plan: it appears with the schedule (inductor).'));
    return;
  }
  const mp = s.memory_plan;
  target.appendChild(el('h2', {}, 'Memory plan'));
  target.appendChild(el('dl', { class: 'kv' }, [
    ['arena', `${mp.arena_bytes || '0'}  = ${coil.formatBytes(mp.arena_bytes_hint)} at the hints`],
    ['peak live', coil.formatBytes(mp.peak_live_bytes_hint)],
    ['without reuse', coil.formatBytes(mp.unplanned_bytes_hint)],
  ].flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)])));

  const arena = s.buffers.filter((b) => b.kind === 'intermediate');
  const drawn = arena.filter((b) => b.offset_hint !== null && b.size_hint !== null && b.first >= 0);
  const K = Math.max(1, s.kernels.length);
  const top = Math.max(1, mp.arena_bytes_hint, ...drawn.map((b) => b.offset_hint + b.size_hint));
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
  for (const b of drawn) {
    const colour = writer.has(b.id) ? s.kernels[writer.get(b.id)].colour : '#999';
    const tip = `${b.name}: ${b.dtype}${b.shape}, ${coil.formatBytes(b.size_hint)} at offset ${b.offset_hint}` +
      ` (${b.offset}); live kernels ${b.first}..${b.last}` + (b.reuses ? `; reuses buffer ${b.reuses}` : '') +
      (b.in_place ? ' (in place)' : '');
    parts.push(`<rect class="buffer-rect" data-buffer="${b.id}" x="${x(b.first)}" y="${y(b.offset_hint)}" ` +
      `width="${Math.max(1, x(b.last + 1) - x(b.first))}" height="${Math.max(1, y(b.offset_hint + b.size_hint) - y(b.offset_hint))}" ` +
      `fill="${colour}" fill-opacity="0.6"><title>${coil.escape(tip)}</title></rect>`);
  }
  parts.push('</svg>');
  const holder = el('div', {});
  holder.innerHTML = parts.join('');
  target.appendChild(holder);
  target.appendChild(el('h3', {}, `Buffers (${s.buffers.length}; ${arena.length} in the arena)`));
  target.appendChild(coil.table(['buffer', 'kind', 'type', 'size', 'arena offset', 'live (kernels)', 'reuses'],
    s.buffers.map((b) => [b.name || String(b.id), b.kind, el('code', {}, b.dtype + b.shape),
      el('code', {}, `${b.size}${b.size_hint !== null ? ' = ' + coil.formatBytes(b.size_hint) : ''}`),
      el('code', {}, b.offset ? `${b.offset}${b.offset_hint !== null ? ' = ' + b.offset_hint : ''}` : '-'),
      b.first >= 0 ? `${b.first}..${b.last}` : 'unused',
      (b.reuses ? String(b.reuses) : '') + (b.in_place ? ' in place' : '')])));
};
