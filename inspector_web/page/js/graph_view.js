// GraphView: draws a stage's graph (positions from the C++ layout) in #graph-view, with zoom
// (wheel, +/-), pan (drag), search and node selection.
//
// Nodes are absolutely positioned <div>s in one transformed layer; edges are drawn on a
// viewport-sized <canvas> behind them, redrawn (culled to the view) when the view moves.
// Measured on a 4,883-node graph in headless Chromium: SVG with one element per node and
// edge took 3-4x longer to build, lay out and paint than divs + canvas (docs/inspector.md).
//
// DOM contract (the browser test and deep links use it): #graph-view has data-node-count =
// the number of graph nodes; each node is a <div class="node" data-node-id="ID"
// data-node-index="I">, each graph input a <div class="node input" data-input-index="K">.
'use strict';

coil.GraphView = class {
  constructor(container, handlers) {
    this.container = container;
    this.handlers = handlers;  // {onSelect(nodeIndex | null)}
    this.view = { x: 0, y: 0, s: 1 };
    this.stage = null;
    this.selected = null;
    this.matches = [];
    this.matchAt = -1;
    this.canvas = coil.el('canvas', { class: 'edges' });
    this.layer = coil.el('div', { class: 'graph-layer' });
    this.installInput();
    if (window.ResizeObserver) new ResizeObserver(() => this.scheduleDraw()).observe(container);
  }

  // Draws `stage` (a coil_stage document).
  render(stage) {
    this.stage = stage;
    this.selected = null;
    this.matches = [];
    const g = stage.graph, L = g.layout, I = g.inputs.length, b = L.boxes;
    const nodeKernel = stage.schedule ? stage.schedule.node_kernel : null;
    const kernels = stage.schedule ? stage.schedule.kernels : null;
    const saved = new Set(stage.autograd ? stage.autograd.saved_nodes : []);
    const savedInputs = new Set(stage.autograd ? stage.autograd.saved_inputs : []);
    const outputs = new Set(g.output_nodes);
    const esc = coil.escape;
    const pos = (item) => `left:${b[4 * item]}px;top:${b[4 * item + 1]}px;width:${b[4 * item + 2]}px;height:${b[4 * item + 3]}px`;
    const parts = [];
    for (let k = 0; k < I; ++k) {
      const v = g.inputs[k];
      parts.push(`<div class="node input${savedInputs.has(k) ? ' saved' : ''}" data-input-index="${k}" ` +
        `style="${pos(k)}" title="input %${v.value} ${esc(v.name)}: ${esc(v.type)}">${esc(v.name || '%' + v.value)}</div>`);
    }
    for (let i = 0; i < g.nodes.length; ++i) {
      const n = g.nodes[i];
      let cls = 'node ns-' + (n.op.slice(0, n.op.indexOf('.')) || 'none');
      if (outputs.has(i)) cls += ' output';
      if (saved.has(i)) cls += ' saved';
      let colour = '';
      if (nodeKernel && nodeKernel[i] >= 0) {
        const c = kernels[nodeKernel[i]].colour;
        cls += ' fused';
        colour = `;background:${c}5c;border-color:${c}`;
      }
      parts.push(`<div class="${cls}" data-node-id="${esc(n.id)}" data-node-index="${i}" style="${pos(I + i)}${colour}">${esc(coil.nodeLabel(n.op))}</div>`);
    }
    // Fit the view while the layer is still empty: fit() measures the container, and measuring
    // after inserting 5,000 nodes would force a style and layout pass now and another one at
    // the next frame (the fitted scale may toggle the layer's "far" class).
    this.layer.textContent = '';
    if (this.container.firstChild !== this.canvas) {
      this.container.textContent = '';
      this.container.append(this.canvas, this.layer);
    }
    this.fit();
    this.layer.innerHTML = parts.join('');
    this.container.dataset.nodeCount = String(g.nodes.length);
    this.nodeEls = this.layer.querySelectorAll('div[data-node-index]');
    // Edges per layout item, and each edge's bounding box for culling.
    this.edgesOf = new Map();
    this.edgeBoxes = new Float64Array(4 * L.edges.length);
    L.edges.forEach((e, k) => {
      for (const item of [e[0], e[1]]) {
        if (!this.edgesOf.has(item)) this.edgesOf.set(item, []);
        this.edgesOf.get(item).push(k);
      }
      let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
      for (let p = 3; p + 1 < e.length; p += 2) {
        x0 = Math.min(x0, e[p]); x1 = Math.max(x1, e[p]);
        y0 = Math.min(y0, e[p + 1]); y1 = Math.max(y1, e[p + 1]);
      }
      this.edgeBoxes.set([x0, y0, x1, y1], 4 * k);
    });
    this.scheduleDraw();
  }

  // Selects node `index` (null clears); `center` moves it to the middle of the view.
  select(index, center) {
    if (this.selected !== null) this.nodeEls[this.selected].classList.remove('selected');
    this.selected = index !== null && index >= 0 && index < this.nodeEls.length ? index : null;
    if (this.selected !== null) {
      this.nodeEls[this.selected].classList.add('selected');
      if (center) this.centerOn(this.stage.graph.inputs.length + this.selected);
    }
    this.scheduleDraw();
    this.handlers.onSelect(this.selected);
  }

  indexOfId(id) {
    return this.stage.graph.nodes.findIndex((n) => n.id === id);
  }

  // Highlights nodes whose op, name or id contains `query`; returns the match count.
  search(query) {
    for (const i of this.matches) this.nodeEls[i].classList.remove('match');
    this.matches = [];
    this.matchAt = -1;
    const q = query.trim().toLowerCase();
    this.layer.classList.toggle('searching', q.length > 0);
    this.scheduleDraw();
    if (!q) return 0;
    this.stage.graph.nodes.forEach((n, i) => {
      if (n.op.toLowerCase().includes(q) || n.name.toLowerCase().includes(q) ||
          n.id.toLowerCase().includes(q)) {
        this.matches.push(i);
      }
    });
    for (const i of this.matches) this.nodeEls[i].classList.add('match');
    this.nextMatch();
    return this.matches.length;
  }

  // Centres the next search match (cycling); returns its position (1-based) or 0.
  nextMatch() {
    if (this.matches.length === 0) return 0;
    this.matchAt = (this.matchAt + 1) % this.matches.length;
    this.centerOn(this.stage.graph.inputs.length + this.matches[this.matchAt]);
    return this.matchAt + 1;
  }

  centerOn(item) {
    const b = this.stage.graph.layout.boxes, r = this.container.getBoundingClientRect();
    const s = Math.max(this.view.s, 0.6);
    this.view = {
      s,
      x: r.width / 2 - (b[4 * item] + b[4 * item + 2] / 2) * s,
      y: r.height / 2 - (b[4 * item + 1] + b[4 * item + 3] / 2) * s,
    };
    this.apply();
  }

  // Shows the top of the drawing, its width fitted (between 0.3:1 and 1:1).
  fit() {
    const L = this.stage.graph.layout, r = this.container.getBoundingClientRect();
    // Hidden (another panel is showing): fit again when the graph panel is shown.
    this.needsFit = r.width === 0;
    const W = r.width || 800, H = r.height || 600, b = L.boxes;
    // Tall graphs (thousands of layers) are read by scrolling down, and long chains drift
    // sideways, so fit what the first screen shows: the boxes in its height at the scale that
    // fits the whole width. Below 0.3 labels are unreadable: wider parts show their middle.
    let s = Math.max(0.3, Math.min(1, W / Math.max(1, L.width)));
    let x0 = Infinity, x1 = -Infinity;
    for (let k = 0; k < b.length; k += 4) {
      if (b[k + 1] > H / s) continue;
      x0 = Math.min(x0, b[k]);
      x1 = Math.max(x1, b[k] + b[k + 2]);
    }
    if (x1 < x0) { x0 = 0; x1 = L.width; }
    s = Math.max(s, Math.min(1, W / Math.max(1, x1 - x0 + 32)));
    this.view = { s, x: W / 2 - ((x0 + x1) / 2) * s, y: 8 };
    this.apply();
  }

  zoomBy(factor, cx, cy) {
    const r = this.container.getBoundingClientRect();
    if (cx === undefined) { cx = r.width / 2; cy = r.height / 2; }
    const s = Math.min(4, Math.max(0.02, this.view.s * factor));
    const k = s / this.view.s;
    this.view = { s, x: cx - (cx - this.view.x) * k, y: cy - (cy - this.view.y) * k };
    this.apply();
  }

  apply() {
    const v = this.view;
    this.layer.style.transform = `translate(${v.x}px,${v.y}px) scale(${v.s})`;
    this.layer.classList.toggle('far', v.s < 0.35);
    this.scheduleDraw();
  }

  scheduleDraw() {
    if (this.drawPending || !this.stage) return;
    this.drawPending = true;
    requestAnimationFrame(() => {
      this.drawPending = false;
      this.drawEdges();
    });
  }

  // Draws the edges that cross the view; the selected node's edges on top, highlighted.
  drawEdges() {
    const c = this.canvas, r = this.container.getBoundingClientRect();
    if (r.width === 0) return;
    const dpr = window.devicePixelRatio || 1;
    if (c.width !== Math.round(r.width * dpr) || c.height !== Math.round(r.height * dpr)) {
      c.width = Math.round(r.width * dpr);
      c.height = Math.round(r.height * dpr);
      c.style.width = r.width + 'px';
      c.style.height = r.height + 'px';
    }
    const ctx = c.getContext('2d'), v = this.view, L = this.stage.graph.layout;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, c.width, c.height);
    ctx.setTransform(dpr * v.s, 0, 0, dpr * v.s, dpr * v.x, dpr * v.y);
    // The view in layout coordinates.
    const vx0 = -v.x / v.s, vy0 = -v.y / v.s, vx1 = vx0 + r.width / v.s, vy1 = vy0 + r.height / v.s;
    const eb = this.edgeBoxes;
    const visible = (k) => eb[4 * k] <= vx1 && eb[4 * k + 2] >= vx0 && eb[4 * k + 1] <= vy1 && eb[4 * k + 3] >= vy0;
    const hot = new Set(this.selected === null ? [] :
      this.edgesOf.get(this.stage.graph.inputs.length + this.selected) || []);
    const dim = this.layer.classList.contains('searching');
    ctx.lineWidth = 1.2;
    ctx.strokeStyle = dim ? 'rgba(154,166,178,0.25)' : '#9aa6b2';
    ctx.fillStyle = ctx.strokeStyle;
    ctx.beginPath();
    const arrows = [];
    for (let k = 0; k < L.edges.length; ++k) {
      if (hot.has(k) || !visible(k)) continue;
      tracePath(ctx, L.edges[k]);
      arrows.push(k);
    }
    ctx.stroke();
    ctx.beginPath();
    for (const k of arrows) traceArrow(ctx, L.edges[k]);
    ctx.fill();
    if (hot.size) {
      ctx.lineWidth = 2.4;
      ctx.strokeStyle = ctx.fillStyle = '#e8590c';
      ctx.beginPath();
      for (const k of hot) tracePath(ctx, L.edges[k]);
      ctx.stroke();
      ctx.beginPath();
      for (const k of hot) traceArrow(ctx, L.edges[k]);
      ctx.fill();
    }
  }

  installInput() {
    const c = this.container;
    let drag = null;
    c.addEventListener('wheel', (ev) => {
      if (!this.stage) return;
      ev.preventDefault();
      const r = c.getBoundingClientRect();
      this.zoomBy(Math.exp(-ev.deltaY * 0.0015), ev.clientX - r.left, ev.clientY - r.top);
    }, { passive: false });
    c.addEventListener('pointerdown', (ev) => {
      if (ev.button !== 0 || !this.stage) return;
      drag = { x: ev.clientX, y: ev.clientY, vx: this.view.x, vy: this.view.y, moved: false };
    });
    window.addEventListener('pointermove', (ev) => {
      if (!drag) return;
      const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
      if (!drag.moved && Math.hypot(dx, dy) < 4) return;
      if (!drag.moved) c.classList.add('panning');
      drag.moved = true;
      this.view.x = drag.vx + dx;
      this.view.y = drag.vy + dy;
      this.apply();
    });
    window.addEventListener('pointerup', () => {
      if (drag && drag.moved) c.classList.remove('panning');
      this.suppressClick = drag !== null && drag.moved;  // a pan ends with a click event
      drag = null;
    });
    c.addEventListener('click', (ev) => {
      if (this.suppressClick) {
        this.suppressClick = false;
        return;
      }
      const node = ev.target.closest('div[data-node-index]');
      if (node) this.select(Number(node.dataset.nodeIndex), false);
    });
  }
};

// Traces a layout edge [from, to, value, x0, y0, x1, y1, ...]: points come in pairs (leave a
// box or bend point, enter the next); between layers an S-curve, through a bend point's
// layer a straight line.
function tracePath(ctx, e) {
  ctx.moveTo(e[3], e[4]);
  for (let k = 5; k + 1 < e.length; k += 2) {
    const x0 = e[k - 2], y0 = e[k - 1], x1 = e[k], y1 = e[k + 1];
    if (((k - 5) / 2) % 2 === 0) {
      const my = (y0 + y1) / 2;
      ctx.bezierCurveTo(x0, my, x1, my, x1, y1);
    } else {
      ctx.lineTo(x1, y1);
    }
  }
}

// A small arrowhead at the edge's end, pointing down into the target box.
function traceArrow(ctx, e) {
  const x = e[e.length - 2], y = e[e.length - 1];
  ctx.moveTo(x, y);
  ctx.lineTo(x - 3.5, y - 7);
  ctx.lineTo(x + 3.5, y - 7);
  ctx.closePath();
}
