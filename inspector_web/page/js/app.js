// The page's controller: loads a file into the wasm core, builds one tab per stage, switches
// panels, follows deep links (#STAGE_KEY/NODE_ID) and reports readiness to tests through
// document.body.dataset.ready ("0" while loading, "1" once a file is rendered or an error
// or the file picker is shown). A file that fails to open leaves the loaded one shown.
'use strict';

coil.App = class {
  constructor(core) {
    this.core = core;
    this.overview = null;
    this.stageDocs = [];
    this.current = -1;
    this.panel = 'graph';
    this.diffOther = new Map();  // stage index -> the stage it is compared with
    this.graph = new coil.GraphView(document.getElementById('graph-view'), {
      onSelect: (i) => this.onSelect(i),
      view: (collapsed) => {
        const doc = this.core.view(this.current, collapsed);
        if (!doc.ok) throw new Error(doc.error);
        return doc;
      },
      // After a group is collapsed or expanded: the groups list and the search's highlights.
      onGroups: () => {
        if (this.graph.selected === null) this.renderGroupsHint();
        const q = document.getElementById('search').value;
        if (q.trim()) this.showSearchCount(1, this.graph.search(q, true));
      },
    });
    this.installControls();
  }

  installControls() {
    document.querySelectorAll('.panel-tab').forEach((b) =>
      b.addEventListener('click', () => this.showPanel(b.dataset.panel)));
    const search = document.getElementById('search');
    search.addEventListener('input', () => this.runSearch(search.value));
    search.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter') {
        const at = this.graph.nextMatch();
        this.showSearchCount(at);
      }
    });
    document.getElementById('zoom-in').addEventListener('click', () => this.graph.zoomBy(1.25));
    document.getElementById('zoom-out').addEventListener('click', () => this.graph.zoomBy(0.8));
    document.getElementById('zoom-fit').addEventListener('click', () => this.graph.fit());
    document.getElementById('groups-collapse').addEventListener('click', () => this.graph.collapseTop());
    document.getElementById('groups-expand').addEventListener('click', () => this.graph.expandAll());
    window.addEventListener('hashchange', () => this.followHash());
    coil.installFileInputs((file) => this.run(async () => this.open(await coil.readPicked(file))));
    const select = document.getElementById('file-select');
    select.addEventListener('change', () => this.run(async () => this.open(await coil.fetchServed(select.value))));
  }

  // Runs a load step with readiness and error reporting: never a blank page.
  async run(step) {
    document.body.dataset.ready = '0';
    try {
      await step();
    } catch (e) {
      this.showError(`internal error while loading: ${e && e.message ? e.message : e}`);
      console.error(e);
    }
    // Ready once what was built is on screen: after the next frame has been painted.
    await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
    document.body.dataset.ready = '1';
  }

  async start() {
    await this.run(async () => {
      const embedded = coil.embeddedFile();
      if (embedded) {
        this.open(embedded);
        return;
      }
      const files = await coil.servedFiles();
      this.served = files || [];
      if (files && files.length) {
        const select = document.getElementById('file-select');
        select.textContent = '';
        files.forEach((f) => select.appendChild(coil.el('option', { value: f }, f)));
        select.hidden = files.length < 2;
        this.open(await coil.fetchServed(files[0]));
        return;
      }
      if (files) this.showError('coil inspect serves no .pb files here (files.json is empty)');
      document.getElementById('drop-zone').hidden = false;
    });
  }

  open(file) {
    const t0 = performance.now();
    this.timing = { decode_ms: file.decodeMs || 0 };
    const overview = this.core.open(file.bytes, file.name);
    this.timing.open_ms = performance.now() - t0;
    if (!overview.ok) {
      // The core keeps the loaded report, and so does the page: only the error is added, and
      // the file menu goes back to the file shown.
      this.showError(overview.error + (this.overview ? ` (still showing ${this.fileName})` : ''));
      if (!this.overview) document.getElementById('drop-zone').hidden = false;
      const select = document.getElementById('file-select');
      if (this.overview && !select.hidden) select.value = this.fileName;
      return;
    }
    this.clear();
    this.fileName = file.name;
    this.diffOther.clear();
    this.overview = overview;
    this.stageDocs = overview.stages.map(() => null);
    document.getElementById('file-info').textContent =
      `${file.name} — ${overview.kind}${overview.model && overview.model !== file.name ? ': ' + overview.model : ''}` +
      ` (${coil.formatBytes(overview.bytes)}, ${overview.stages.length} stages)`;
    const file_select = document.getElementById('file-select');
    if (!file_select.hidden) file_select.value = file.name;
    const warning = document.getElementById('warning');
    warning.textContent = overview.warning;
    warning.hidden = !overview.warning;
    coil.renderTimings(document.getElementById('timings'), overview);
    coil.renderCompileIndex(document.getElementById('compile-index'), overview,
      (s) => { this.showStage(s); this.showPanel('graph'); });
    this.compare = { doc: null, error: null };  // the core dropped its compare file
    this.renderCompare();
    const tabs = document.getElementById('stage-tabs');
    overview.stages.forEach((s, i) => {
      const b = coil.el('button', { class: 'stage-tab', 'data-stage': s.key, title: `${s.kind} · ${s.node_count} nodes` },
        [s.title, coil.el('span', { class: 'count' }, String(s.node_count))]);
      b.addEventListener('click', () => this.showStage(i));
      tabs.appendChild(b);
    });
    tabs.hidden = false;
    document.getElementById('panel-tabs').hidden = false;
    document.getElementById('main').hidden = false;
    if (overview.stages.length === 0) {
      this.showError(`${file.name}: the ${overview.kind} holds no stage with a graph`);
      this.showPanel('timings');
      return;
    }
    if (!this.followHash()) this.showStage(0);
    // Where the time went (for the browser test's budget report): decoding the embedded
    // base64, the core's open, the first stage's JSON (layout included) and drawing it.
    this.timing.total_ms = performance.now() - t0 + this.timing.decode_ms;
    for (const k of Object.keys(this.timing)) this.timing[k] = Math.round(this.timing[k]);
    document.body.dataset.timing = JSON.stringify(this.timing);
  }

  // The Compare panel (compare.js) for the open file and the compare file, if any.
  renderCompare() {
    coil.renderCompare(document.getElementById('compare'),
      { fileName: this.fileName, served: this.served, doc: this.compare.doc, error: this.compare.error }, {
        onFile: (file) => this.run(async () => this.openCompare(await coil.readPicked(file))),
        onServed: (name) => this.run(async () => this.openCompare(await coil.fetchServed(name))),
        onKernel: (key, k) => {
          const s = this.overview.stages.findIndex((x) => x.key === key);
          if (s < 0) return;
          this.showStage(s);
          this.pickKernel(k);
        },
      });
  }

  // Loads `file` as the second compile; one that fails leaves the previous comparison.
  openCompare(file) {
    const opened = this.core.openCompare(file.bytes, file.name);
    if (!opened.ok) {
      this.compare.error = opened.error + (this.compare.doc ? ` (still comparing with ${this.compare.doc.b})` : '');
    } else {
      const doc = this.core.compare();
      if (!doc.ok) throw new Error(doc.error);
      this.compare = { doc, error: null };
    }
    this.renderCompare();
    this.showPanel('compare');
  }

  clear() {
    document.getElementById('error').hidden = true;
    document.getElementById('drop-zone').hidden = true;
    document.getElementById('stage-tabs').textContent = '';
    document.getElementById('stage-tabs').hidden = true;
    document.getElementById('panel-tabs').hidden = true;
    document.getElementById('main').hidden = true;
    document.getElementById('warning').hidden = true;
    document.getElementById('file-info').textContent = '';
    this.overview = null;
    this.current = -1;
  }

  showError(message) {
    const e = document.getElementById('error');
    e.textContent = message;
    e.hidden = false;
  }

  stageDoc(i) {
    if (!this.stageDocs[i]) {
      const t0 = performance.now();
      const doc = this.core.stage(i);
      if (this.timing && this.timing.stage_ms === undefined) this.timing.stage_ms = performance.now() - t0;
      if (!doc.ok) throw new Error(doc.error);
      this.stageDocs[i] = doc;
    }
    return this.stageDocs[i];
  }

  showStage(i) {
    if (i === this.current) return;
    this.current = i;
    const stage = this.stageDoc(i);
    document.querySelectorAll('.stage-tab').forEach((b, k) => b.classList.toggle('active', k === i));
    const has = { kernels: !!stage.schedule, memory: !!stage.schedule };
    document.querySelectorAll('.panel-tab').forEach((b) => { b.disabled = has[b.dataset.panel] === false; });
    if (has[this.panel] === false) this.panel = 'graph';
    const t0 = performance.now();
    this.graph.render(stage);
    if (this.timing && this.timing.render_ms === undefined) this.timing.render_ms = performance.now() - t0;
    document.getElementById('search').value = '';
    this.showSearchCount(0);
    const legend = document.getElementById('legend');
    legend.textContent = stage.schedule ? 'node colour = kernel (fusion group)' :
      stage.autograd ? 'dashed border = saved for backward' : '';
    this.renderGroupsHint();
    // Every panel is filled now (they are small next to the graph), so tests and users find
    // them complete whichever tab they open.
    const pick = (n) => { this.showPanel('graph'); this.graph.select(n, true); };
    coil.renderSummary(document.getElementById('stage-summary'), stage);
    this.renderDiff();
    this.showKernel = coil.renderKernels(document.getElementById('kernel-table'),
      document.getElementById('kernel-source'), stage, pick);
    this.renderMemory('');
    coil.renderInfo(document.getElementById('stage-info'), stage, (k) => this.pickKernel(k));
    this.showPanel(this.panel);
    this.setHash(null);
  }

  // #node-details with no node selected: the hint and the name path groups.
  renderGroupsHint() {
    coil.renderNodeDetails(document.getElementById('node-details'), null, null,
      { stage: this.stageDocs[this.current], searchFor: (q) => this.searchFor(q), graph: this.graph });
  }

  // The memory plan at the symbol values typed (`typed`, "batch=4"), else --dim, the hints or
  // the minimum (core/memory_json.h).
  renderMemory(typed) {
    const stage = this.stageDocs[this.current];
    const memory = stage.schedule ? this.core.memory(this.current, typed) : null;
    coil.renderMemoryPlan(document.getElementById('memory-plan'), stage,
      memory && memory.ok ? memory.memory : null, (text) => this.renderMemory(text));
  }

  // Shows kernel `k` of the current stage: its row and (a KernelModule) its source.
  pickKernel(k) {
    this.showPanel('kernels');
    if (this.showKernel) this.showKernel(k);
  }

  // Opens node `node` of stage `stage` (a provenance link).
  pickStageNode(stage, node) {
    this.showStage(stage);
    this.showPanel('graph');
    this.graph.select(node, true);
  }

  renderDiff() {
    const i = this.current;
    // The previous stage; the first stage is compared with the next (never with itself).
    const n = this.overview.stages.length;
    const other = this.diffOther.has(i) ? this.diffOther.get(i) : i > 0 ? i - 1 : Math.min(1, n - 1);
    const doc = this.overview.stages.length > 1 ? this.core.diff(other, i) : null;
    coil.renderDiff(document.getElementById('stage-diff'), this.overview.stages, i, other,
      doc && doc.ok ? doc : null, (o) => { this.diffOther.set(i, o); this.renderDiff(); });
    // The structural part needs the other stage's document (its layout too): built only when
    // the Diff panel is shown, so opening a stage costs one document.
    if (doc && doc.ok && this.panel === 'diff') {
      coil.renderStructuralDiff(document.getElementById('stage-diff'), this.stageDoc(other),
        this.stageDoc(i), (k) => this.pickKernel(k));
    }
  }

  showPanel(name) {
    const changed = this.panel !== name;
    this.panel = name;
    if (name === 'diff' && changed && this.current >= 0) this.renderDiff();
    document.querySelectorAll('.panel-tab').forEach((b) => b.classList.toggle('active', b.dataset.panel === name));
    document.querySelectorAll('#main > .panel').forEach((p) => { p.hidden = p.dataset.panel !== name; });
    if (name === 'graph' && this.graph.stage && this.graph.needsFit) this.graph.fit();
  }

  onSelect(index) {
    const stage = this.stageDocs[this.current];
    let doc = null, answerProvenance = null;
    if (index !== null) {
      const answer = this.core.node(this.current, index);
      if (!answer.ok) throw new Error(answer.error);
      doc = answer.node;
      answerProvenance = answer.provenance;
    }
    coil.renderNodeDetails(document.getElementById('node-details'), doc,
      (n) => this.graph.select(n, true), {
        searchFor: (q) => this.searchFor(q),
        provenance: answerProvenance,
        stage,
        pickStageNode: (s, n) => this.pickStageNode(s, n),
        pickKernel: (k) => this.pickKernel(k),
      });
    this.setHash(index === null ? null : stage.graph.nodes[index].id);
  }

  setHash(nodeId) {
    if (this.current < 0) return;
    const key = this.overview.stages[this.current].key;
    const hash = '#' + key + (nodeId === null ? '' : '/' + encodeURIComponent(nodeId));
    if (location.hash !== hash) history.replaceState(null, '', hash);
  }

  // Applies #STAGE_KEY[/NODE_ID]; returns whether it named a stage of this file.
  followHash() {
    if (!this.overview || location.hash.length < 2) return false;
    const h = location.hash.slice(1), slash = h.indexOf('/');
    const key = decodeURIComponent(slash < 0 ? h : h.slice(0, slash));
    const stage = this.overview.stages.findIndex((s) => s.key === key);
    if (stage < 0) return false;
    this.showStage(stage);
    if (slash >= 0) {
      const id = decodeURIComponent(h.slice(slash + 1));
      const index = this.graph.indexOfId(id);
      this.showPanel('graph');
      if (index >= 0) this.graph.select(index, true);
      else this.showError(`deep link: stage "${key}" has no node "${id}"`);
    }
    return true;
  }

  // Puts `query` in the search box and runs it (a name path group's link).
  searchFor(query) {
    document.getElementById('search').value = query;
    this.showPanel('graph');
    this.runSearch(query);
  }

  runSearch(query) {
    const n = this.graph.search(query);
    this.showSearchCount(n ? 1 : 0, n);
  }

  showSearchCount(at, total) {
    const count = total === undefined ? this.graph.matches.length : total;
    document.getElementById('search-count').textContent =
      document.getElementById('search').value.trim() ? (count ? `${at} of ${count}` : 'no match') : '';
  }
};

// Start once the whole document (including an embedded report after the scripts) is parsed.
window.addEventListener('DOMContentLoaded', async () => {
  window.onerror = (msg) => {
    const e = document.getElementById('error');
    e.textContent = `internal error: ${msg}`;
    e.hidden = false;
    document.body.dataset.ready = '1';
  };
  let core;
  try {
    core = await coil.Core.create(CoilInspectorModule);
  } catch (e) {
    const err = document.getElementById('error');
    err.textContent = `the WebAssembly core failed to start: ${e && e.message ? e.message : e}`;
    err.hidden = false;
    document.body.dataset.ready = '1';
    return;
  }
  coil.app = new coil.App(core);
  await coil.app.start();
});
