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
// On a schedule stage each kernel with nodes is a <div class="kernel-box" data-kernel="K">
// drawn around the boxes of exactly its nodes (behind them, in the kernel's colour). The
// minimap (<canvas class="minimap">) shows the whole drawing and the view; a click there
// centres the view on that point.
//
// Name path groups (core/name_groups.h): a collapsed group is one box, <div class="node
// group" data-group-index="G" data-group="PATH" data-group-nodes="COUNT">, standing for all
// its nodes, with their edges to the outside; a click expands it (the core lays the view out
// again). #graph-view's data-collapsed lists the collapsed groups' indices, data-item-count
// the boxes drawn. Selecting or searching a hidden node expands (selection) or highlights
// (search) the group holding it.
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
    this.minimap = coil.el('canvas', { class: 'minimap', title: 'the whole graph: click to go there' });
    this.installInput();
    if (window.ResizeObserver) new ResizeObserver(() => this.scheduleDraw()).observe(container);
  }

  // Draws `stage` (a coil_stage document) as it opens: its default groups collapsed.
  render(stage) {
    this.collapsed = new Set(stage.graph.collapsed || []);
    this.draw(stage, stage.graph.layout, null);
  }

  // Draws `stage` with `layout` (the stage's or a coil_view one); `keep` (a layout item's
  // position before) keeps the view where it was instead of fitting it.
  draw(stage, layout, keep) {
    this.stage = stage;
    this.layout = layout;
    this.selected = null;
    this.matches = [];
    const g = stage.graph, L = layout, I = g.inputs.length, N = g.nodes.length, b = L.boxes;
    const items = b.length / 4;
    // Item <-> node maps: without collapsed groups item I + i is node i.
    this.itemCode = L.items ? Int32Array.from(L.items) : null;
    this.itemOfNode = new Int32Array(N);
    this.nodeOfItem = new Int32Array(items).fill(-1);
    if (!this.itemCode) {
      for (let i = 0; i < N; ++i) { this.itemOfNode[i] = I + i; this.nodeOfItem[I + i] = i; }
    }
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
    const groupItem = new Map();  // collapsed group -> its item
    for (let item = I; item < items; ++item) {
      const code = this.itemCode ? this.itemCode[item] : item;
      if (code >= I + N) {  // a collapsed group
        const gi = code - I - N, grp = g.groups[gi];
        groupItem.set(gi, item);
        parts.push(`<div class="node group" data-group-index="${gi}" data-group="${esc(grp.path)}" ` +
          `data-group-nodes="${grp.nodes}" style="${pos(item)}" title="${esc(grp.path)}: ${grp.nodes} nodes (click to expand)">` +
          `${esc(grp.label)}</div>`);
        continue;
      }
      const i = code - I;
      if (this.itemCode) { this.itemOfNode[i] = item; this.nodeOfItem[item] = i; }
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
      parts.push(`<div class="${cls}" data-node-id="${esc(n.id)}" data-node-index="${i}" style="${pos(item)}${colour}">${esc(coil.nodeLabel(n.op))}</div>`);
    }
    if (this.itemCode) {  // a hidden node is shown by the outermost collapsed group holding it
      for (let i = 0; i < N; ++i) {
        if (this.nodeOfItem[this.itemOfNode[i]] === i) continue;
        let shown = -1;
        for (let a = g.node_group[i]; a >= 0; a = g.groups[a].parent) {
          if (groupItem.has(a)) shown = groupItem.get(a);
        }
        this.itemOfNode[i] = shown;
      }
    }
    // Kernel boxes: each kernel's nodes' bounding box, padded, behind the nodes (first in the
    // layer). Where another node falls inside a box the box is split by layer rows, so a box
    // never contains a node of another kernel.
    this.kernelBoxes = kernels ? coil.kernelBoxes(kernels, b, this.itemOfNode, this.nodeOfItem) : [];
    // A CUDA KernelModule's launch configurations (grid, block, shared memory): on each of the
    // kernel's boxes (data-launch, tooltip) and written above its first one.
    const launch = new Map();
    for (const k of stage.kernel_module ? stage.kernel_module.kernels : []) {
      if (k.launch && k.kernel_index >= 0) launch.set(k.kernel_index, k.launch);
    }
    const labelled = new Set();
    const boxParts = this.kernelBoxes.map((k) => {
      const l = launch.get(k.kernel) || '', first = l && !labelled.has(k.kernel);
      if (first) labelled.add(k.kernel);
      return `<div class="kernel-box" data-kernel="${k.kernel}"${l ? ` data-launch="${esc(l)}"` : ''} ` +
        `title="kernel ${esc(kernels[k.kernel].name)}${l ? ': ' + esc(l) : ''}" ` +
        `style="left:${k.x0}px;top:${k.y0}px;width:${k.x1 - k.x0}px;height:${k.y1 - k.y0}px;border-color:${kernels[k.kernel].colour}">` +
        (first ? `<span class="launch" style="color:${kernels[k.kernel].colour}">${esc(kernels[k.kernel].name)} ${esc(l)}</span>` : '') + '</div>';
    });
    // Fit the view while the layer is still empty: fit() measures the container, and measuring
    // after inserting 5,000 nodes would force a style and layout pass now and another one at
    // the next frame (the fitted scale may toggle the layer's "far" class).
    this.layer.textContent = '';
    if (this.container.firstChild !== this.canvas) {
      this.container.textContent = '';
      this.container.append(this.canvas, this.layer);
    }
    if (this.minimap.parentNode !== this.container) this.container.appendChild(this.minimap);
    this.drawMinimapBase();
    if (keep) this.keepView(keep); else this.fitTop();
    this.layer.innerHTML = boxParts.join('') + parts.join('');
    this.container.dataset.nodeCount = String(g.nodes.length);
    this.container.dataset.itemCount = String(items);
    this.container.dataset.collapsed = [...this.collapsed].sort((p, q) => p - q).join(',');
    this.nodeEls = new Array(N).fill(null);  // null: hidden in a collapsed group
    for (const e of this.layer.querySelectorAll('div[data-node-index]')) this.nodeEls[Number(e.dataset.nodeIndex)] = e;
    this.itemEls = this.layer.querySelectorAll('div.node');  // inputs, then nodes
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
    if (index !== null && index >= 0 && index < this.nodeEls.length && !this.nodeEls[index]) {
      this.reveal(index);  // hidden in a collapsed group: expand the groups holding it
    }
    if (this.selected !== null) this.nodeEls[this.selected].classList.remove('selected');
    this.selected = index !== null && index >= 0 && index < this.nodeEls.length ? index : null;
    if (this.selected !== null) {
      this.nodeEls[this.selected].classList.add('selected');
      if (center) this.centerOn(this.itemOfNode[this.selected]);
    }
    this.scheduleDraw();
    this.handlers.onSelect(this.selected);
  }

  // Lays the view out again with this.collapsed, keeping the view on `anchor` (a node) or,
  // without one, where it is.
  relayout(anchor) {
    const doc = this.handlers.view([...this.collapsed].sort((p, q) => p - q).join(','));
    const keep = anchor === undefined ? { view: this.view } : { node: anchor, old: this.screenOf(this.itemOfNode[anchor]) };
    this.draw(this.stage, doc.layout, keep);
    this.layer.classList.remove('searching');
    if (this.handlers.onGroups) this.handlers.onGroups();
  }

  // Expands group `g` (a click on its box) and the groups around it.
  expand(g) {
    const groups = this.stage.graph.groups;
    for (let a = g; a >= 0; a = groups[a].parent) this.collapsed.delete(a);
    this.relayout(groups[g].first);
  }

  // Collapses group `g` into one box.
  collapse(g) {
    this.collapsed.add(g);
    this.relayout(this.stage.graph.groups[g].first);
  }

  // Every group expanded ("expand"), or every group collapsed ("collapse": the top-level
  // groups are drawn, and each click on a box opens one level).
  expandAll() { this.collapsed.clear(); this.relayout(); }
  collapseTop() {
    this.collapsed = new Set(this.stage.graph.groups.map((_, k) => k));
    this.relayout();
  }

  // Expands the collapsed groups that hide node `i`.
  reveal(i) {
    const groups = this.stage.graph.groups;
    for (let a = this.stage.graph.node_group[i]; a >= 0; a = groups[a].parent) this.collapsed.delete(a);
    this.relayout(i);
  }

  // Screen position of a layout item's centre.
  screenOf(item) {
    const b = this.layout.boxes, v = this.view;
    return { x: v.x + (b[4 * item] + b[4 * item + 2] / 2) * v.s, y: v.y + (b[4 * item + 1] + b[4 * item + 3] / 2) * v.s };
  }

  // After a relayout: the anchor node where its item was on screen, at the same scale.
  keepView(keep) {
    if (keep.view) { this.view = keep.view; this.apply(); return; }
    const b = this.layout.boxes, item = this.itemOfNode[keep.node], s = this.view.s;
    this.view = {
      s,
      x: keep.old.x - (b[4 * item] + b[4 * item + 2] / 2) * s,
      y: keep.old.y - (b[4 * item + 1] + b[4 * item + 3] / 2) * s,
    };
    this.apply();
  }

  indexOfId(id) {
    return this.stage.graph.nodes.findIndex((n) => n.id === id);
  }

  // Highlights nodes whose op, name (name path), id or source location contains `query`,
  // and graph inputs whose name or type does (a node hidden in a collapsed group highlights
  // the group); returns the match count (boxes highlighted).
  search(query, quiet) {
    for (const item of this.matches) this.itemEls[item].classList.remove('match');
    this.matches = [];  // layout items: inputs first, then nodes
    this.matchAt = -1;
    const q = query.trim().toLowerCase();
    this.layer.classList.toggle('searching', q.length > 0);
    this.scheduleDraw();
    if (!q) return 0;
    const g = this.stage.graph;
    g.inputs.forEach((v, k) => {
      if (v.name.toLowerCase().includes(q) || ('%' + v.value) === q || v.type.toLowerCase().includes(q)) {
        this.matches.push(k);
      }
    });
    const seen = new Set();
    g.nodes.forEach((n, i) => {
      if (n.op.toLowerCase().includes(q) || n.name.toLowerCase().includes(q) ||
          n.id.toLowerCase().includes(q) || (n.loc && n.loc.toLowerCase().includes(q))) {
        const item = this.itemOfNode[i];
        if (!seen.has(item)) { seen.add(item); this.matches.push(item); }
      }
    });
    for (const item of this.matches) this.itemEls[item].classList.add('match');
    if (!quiet) this.nextMatch();
    return this.matches.length;
  }

  // Centres the next search match (cycling); returns its position (1-based) or 0.
  nextMatch() {
    if (this.matches.length === 0) return 0;
    this.matchAt = (this.matchAt + 1) % this.matches.length;
    this.centerOn(this.matches[this.matchAt]);
    return this.matchAt + 1;
  }

  centerOn(item) {
    const b = this.layout.boxes, r = this.container.getBoundingClientRect();
    const s = Math.max(this.view.s, 0.6);
    this.view = {
      s,
      x: r.width / 2 - (b[4 * item] + b[4 * item + 2] / 2) * s,
      y: r.height / 2 - (b[4 * item + 1] + b[4 * item + 3] / 2) * s,
    };
    this.apply();
  }

  // The first view of a stage: the top of the drawing, its width fitted (between 0.3:1 and
  // 1:1), so labels stay readable on tall graphs.
  fitTop() {
    const L = this.layout, r = this.container.getBoundingClientRect();
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

  // Fit to view: the whole drawing (every box) in the view, at most 1:1 ("fit" button).
  fit() {
    const b = this.layout.boxes, r = this.container.getBoundingClientRect();
    this.needsFit = false;
    const W = r.width || 800, H = r.height || 600, pad = 12;
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (let k = 0; k < b.length; k += 4) {
      x0 = Math.min(x0, b[k]); y0 = Math.min(y0, b[k + 1]);
      x1 = Math.max(x1, b[k] + b[k + 2]); y1 = Math.max(y1, b[k + 1] + b[k + 3]);
    }
    if (x1 < x0) { x0 = y0 = 0; x1 = y1 = 1; }
    const s = Math.min(1, (W - 2 * pad) / Math.max(1, x1 - x0), (H - 2 * pad) / Math.max(1, y1 - y0));
    this.view = { s, x: W / 2 - ((x0 + x1) / 2) * s, y: H / 2 - ((y0 + y1) / 2) * s };
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
    this.layer.classList.toggle('specks', v.s < 0.12);
    this.scheduleDraw();
  }

  scheduleDraw() {
    if (this.drawPending || !this.stage) return;
    this.drawPending = true;
    requestAnimationFrame(() => {
      this.drawPending = false;
      this.drawEdges();
      this.drawMinimap();
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
    const ctx = c.getContext('2d'), v = this.view, L = this.layout;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, c.width, c.height);
    ctx.setTransform(dpr * v.s, 0, 0, dpr * v.s, dpr * v.x, dpr * v.y);
    // The view in layout coordinates.
    const vx0 = -v.x / v.s, vy0 = -v.y / v.s, vx1 = vx0 + r.width / v.s, vy1 = vy0 + r.height / v.s;
    const eb = this.edgeBoxes;
    const visible = (k) => eb[4 * k] <= vx1 && eb[4 * k + 2] >= vx0 && eb[4 * k + 1] <= vy1 && eb[4 * k + 3] >= vy0;
    const hot = new Set(this.selected === null ? [] :
      this.edgesOf.get(this.itemOfNode[this.selected]) || []);
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
    // Edge labels: the value's type (shape) beside each visible value's first edge, when zoomed in
    // enough to read them (at most 600 per frame). data-edge-labels counts those drawn.
    let labels = 0;
    if (v.s >= 0.7 && L.types) {
      ctx.font = '10px monospace';
      ctx.fillStyle = dim ? 'rgba(90,100,110,0.3)' : '#5c6770';
      const done = new Set();  // a value read by several nodes is labelled once
      for (let k = 0; k < L.edges.length && labels < 600; ++k) {
        if (!visible(k) || done.has(L.edges[k][2])) continue;
        const e = L.edges[k];
        done.add(e[2]);
        ctx.fillText(L.types[L.edge_type[k]], e[3] + 4, e[4] + 11);
        labels += 1;
      }
    }
    this.container.dataset.edgeLabels = String(labels);
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

  // The minimap's picture of every box (coloured by kernel on schedule stages), drawn once per
  // stage into an offscreen canvas; drawMinimap adds the view's rectangle.
  drawMinimapBase() {
    const L = this.layout, b = L.boxes, I = this.stage.graph.inputs.length;
    const maxW = 180, maxH = 220;
    const k = Math.min(maxW / Math.max(1, L.width), maxH / Math.max(1, L.height));
    const w = Math.max(20, Math.ceil(L.width * k)), h = Math.max(20, Math.ceil(L.height * k));
    this.minimapScale = k;
    const base = this.minimapBase || (this.minimapBase = document.createElement('canvas'));
    base.width = w;
    base.height = h;
    this.minimap.width = w;
    this.minimap.height = h;
    const ctx = base.getContext('2d');
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, w, h);
    const sched = this.stage.schedule;
    for (let item = 0; item < b.length / 4; ++item) {
      const node = this.nodeOfItem[item];
      const kern = sched && node >= 0 ? sched.node_kernel[node] : -1;
      ctx.fillStyle = kern >= 0 ? sched.kernels[kern].colour : item < I ? '#1c7ed6' : node < 0 ? '#495057' : '#868e96';
      ctx.fillRect(b[4 * item] * k, b[4 * item + 1] * k, Math.max(1, b[4 * item + 2] * k),
        Math.max(1, b[4 * item + 3] * k));
    }
  }

  drawMinimap() {
    if (!this.minimapBase || !this.stage) return;
    const ctx = this.minimap.getContext('2d'), k = this.minimapScale, v = this.view;
    const r = this.container.getBoundingClientRect();
    ctx.drawImage(this.minimapBase, 0, 0);
    ctx.strokeStyle = '#e8590c';
    ctx.lineWidth = 1.5;
    ctx.strokeRect((-v.x / v.s) * k, (-v.y / v.s) * k, (r.width / v.s) * k, (r.height / v.s) * k);
  }

  installInput() {
    const c = this.container;
    this.minimap.addEventListener('pointerdown', (ev) => {
      ev.stopPropagation();
      const m = this.minimap.getBoundingClientRect(), r = c.getBoundingClientRect();
      const x = (ev.clientX - m.left) / this.minimapScale, y = (ev.clientY - m.top) / this.minimapScale;
      this.view.x = r.width / 2 - x * this.view.s;
      this.view.y = r.height / 2 - y * this.view.s;
      this.apply();
    });
    this.minimap.addEventListener('click', (ev) => ev.stopPropagation());
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
    // Tooltips (op, name path, source location, kernel) are made on first hover: a title on
    // each of 5,000 nodes would cost the first drawing.
    c.addEventListener('mouseover', (ev) => {
      const e = ev.target.closest && ev.target.closest('div[data-node-index]');
      if (!e || e.title || !this.stage) return;
      const i = Number(e.dataset.nodeIndex), n = this.stage.graph.nodes[i], s = this.stage.schedule;
      e.title = n.op + (n.name ? ` "${n.name}"` : '') + (n.loc ? ` at ${n.loc}` : '') +
        (s && s.node_kernel[i] >= 0 ? ` · kernel ${s.kernels[s.node_kernel[i]].name}` : '');
    });
    c.addEventListener('click', (ev) => {
      if (this.suppressClick) {
        this.suppressClick = false;
        return;
      }
      const group = ev.target.closest('div[data-group-index]');
      if (group) {
        this.expand(Number(group.dataset.groupIndex));
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

// Boxes around each kernel's nodes: [{kernel, x0, y0, x1, y1}] in layout coordinates. A
// kernel's drawn nodes (layout boxes b, node i at item itemOfNode[i], nodeOfItem[item] = -1
// for inputs and collapsed groups, whose nodes get no box) are taken by layer then x; each joins
// the current box unless the grown box (padded) would overlap a box of another item, which
// starts a new box. So a box holds only its kernel's nodes, and every node is in a box.
coil.kernelBoxes = function (kernels, b, itemOfNode, nodeOfItem) {
  const pad = 5, items = b.length / 4;
  const kernelOf = new Int32Array(items).fill(-1);
  const drawn = (n) => n >= 0 && n < itemOfNode.length && nodeOfItem[itemOfNode[n]] === n;
  kernels.forEach((k, ki) => k.nodes.forEach((n) => {
    if (drawn(n) && kernelOf[itemOfNode[n]] < 0) kernelOf[itemOfNode[n]] = ki;
  }));
  // Items by row (the layered layout puts a layer's boxes at one y), rows sorted by y.
  const rows = new Map();
  for (let it = 0; it < items; ++it) {
    const y = b[4 * it + 1];
    if (!rows.has(y)) rows.set(y, []);
    rows.get(y).push(it);
  }
  const ys = [...rows.keys()].sort((p, q) => p - q);
  const overlapsForeign = (ki, members, x0, y0, x1, y1) => {
    // Rows whose boxes may reach into [y0, y1] (a box is at most a row's height tall).
    let lo = 0, hi = ys.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (ys[mid] < y0 - 200) lo = mid + 1; else hi = mid; }
    for (let r = lo; r < ys.length && ys[r] <= y1; ++r) {
      for (const it of rows.get(ys[r])) {
        if (members.has(it)) continue;
        const bx0 = b[4 * it], by0 = b[4 * it + 1], bx1 = bx0 + b[4 * it + 2], by1 = by0 + b[4 * it + 3];
        if (bx0 < x1 && bx1 > x0 && by0 < y1 && by1 > y0) return true;
      }
    }
    return false;
  };
  const out = [];
  kernels.forEach((k, ki) => {
    const mine = k.nodes.filter(drawn).map((n) => itemOfNode[n]).filter((it) => kernelOf[it] === ki);
    mine.sort((p, q) => b[4 * p + 1] - b[4 * q + 1] || b[4 * p] - b[4 * q]);
    let cur = null;
    for (const it of mine) {
      const x0 = b[4 * it] - pad, y0 = b[4 * it + 1] - pad;
      const x1 = b[4 * it] + b[4 * it + 2] + pad, y1 = b[4 * it + 1] + b[4 * it + 3] + pad;
      if (cur) {
        const g = { x0: Math.min(cur.x0, x0), y0: Math.min(cur.y0, y0), x1: Math.max(cur.x1, x1), y1: Math.max(cur.y1, y1) };
        const members = new Set(cur.members).add(it);
        if (!overlapsForeign(ki, members, g.x0, g.y0, g.x1, g.y1)) {
          Object.assign(cur, g);
          cur.members = members;
          continue;
        }
        out.push(cur);
      }
      cur = { kernel: ki, x0, y0, x1, y1, members: new Set([it]) };
    }
    if (cur) out.push(cur);
  });
  return out.map(({ kernel, x0, y0, x1, y1, members }) => ({ kernel, x0, y0, x1, y1, nodes: [...members].map((it) => nodeOfItem[it]) }));
};
