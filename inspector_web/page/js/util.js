// Small helpers shared by the page's scripts: HTML escaping, element building, number formats.
// All scripts share one namespace object, `coil`, and are inlined in this order: util.js,
// wasm_core.js, graph_view.js, panels.js, kernels.js, memory_plan.js, load.js, app.js.
'use strict';
const coil = (window.coil = window.coil || {});

coil.escape = function (s) {
  return String(s).replace(/[&<>"']/g, (c) => ({
    '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;',
  })[c]);
};

// el('div', {class: 'x', 'data-a': 1}, 'text' | Node | [children]) -> HTMLElement.
coil.el = function (tag, attrs, children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'onclick') e.addEventListener('click', v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  const add = (c) => {
    if (c === undefined || c === null) return;
    if (Array.isArray(c)) c.forEach(add);
    else e.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  };
  add(children);
  return e;
};

coil.formatBytes = function (n) {
  if (n === null || n === undefined) return '?';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = Number(n), u = 0;
  while (Math.abs(v) >= 1024 && u < units.length - 1) { v /= 1024; ++u; }
  return (u === 0 ? String(v) : v.toFixed(v < 10 ? 2 : 1)) + ' ' + units[u];
};

coil.formatSeconds = function (s) {
  if (!s) return '0 s';
  if (s < 1e-3) return (s * 1e6).toFixed(0) + ' µs';
  if (s < 1) return (s * 1e3).toFixed(s < 0.01 ? 2 : 1) + ' ms';
  return s.toFixed(2) + ' s';
};

// A table: headers ['op', {text: 'count', num: true}], rows of cells (strings, Nodes, or
// {text|node, num, class}); rowClass(row index) -> class.
coil.table = function (headers, rows, rowClass) {
  const head = coil.el('tr', {}, headers.map((h) => coil.el('th', { class: h.num ? 'num' : null },
    typeof h === 'string' ? h : h.text)));
  const body = rows.map((r, i) => coil.el('tr', { class: rowClass ? rowClass(i) : null },
    r.map((c) => {
      if (c !== null && typeof c === 'object' && !(c instanceof Node)) {
        return coil.el('td', { class: [c.num ? 'num' : '', c.class || ''].join(' ').trim() || null },
          c.node || c.text);
      }
      return coil.el('td', {}, c);
    })));
  return coil.el('table', { class: 'data' }, [coil.el('thead', {}, head), coil.el('tbody', {}, body)]);
};
