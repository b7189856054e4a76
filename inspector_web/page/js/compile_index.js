// #compile-index (the Compiles panel): one row per compile of a captured function that the
// report holds (core/compile_index.h), as tlparse's front page lists them: the compile's
// number, why it compiled (the first call, or the guard that failed), its graphs (links that
// open each stage), and its guard and graph break counts. Each row is
// <tr data-compile="N">, its reason in td.reason, its graph links span[data-stage-link=KEY].
'use strict';

coil.renderCompileIndex = function (target, overview, openStage) {
  const el = coil.el, compiles = overview.compiles || [], missing = overview.compiles_missing || [];
  target.textContent = '';
  target.appendChild(el('h2', {}, `Compiles (${compiles.length})`));
  if (!compiles.length) {
    target.appendChild(el('p', { class: 'hint' },
      'This file holds no captured function (no capture stage): a model compiled from ONNX or text IR compiles once.'));
    return;
  }
  if (missing.length) {
    target.appendChild(el('p', { class: 'hint', id: 'compiles-missing' },
      `This report keeps ${compiles.map((c) => 'compile ' + c.compile).join(', ')}, not compile ${missing.join(', ')} ` +
      '(it was written keeping only the latest compile).'));
  }
  const head = el('tr', {}, ['compile', 'why it compiled', 'graphs', 'guards', 'graph breaks'].map((h) => el('th', {}, h)));
  const rows = compiles.map((c) => el('tr', { 'data-compile': String(c.compile) }, [
    el('td', {}, String(c.compile)),
    el('td', { class: 'reason' }, c.compile === 1 ? 'first call' : c.reason ? `guard failed: ${c.reason}` : 'recompiled (reason not recorded)'),
    el('td', {}, c.stages.length ? c.stages.flatMap((s, k) => [k ? ', ' : '',
      el('span', { class: 'link mono', 'data-stage-link': overview.stages[s].key, onclick: () => openStage(s) },
        `${overview.stages[s].key} (${c.nodes[k]} nodes)`)]) : 'no graph'),
    el('td', { class: 'num' }, String(c.guards)),
    el('td', { class: 'num' }, String(c.breaks)),
  ]));
  target.appendChild(el('table', { class: 'data', id: 'compile-table' }, [el('thead', {}, head), el('tbody', {}, rows)]));
};
