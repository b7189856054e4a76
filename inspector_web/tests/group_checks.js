// The browser test's checks of name path groups (collapsible module hierarchy), run by
// browser_test.js on the GPT report's prims stage. The groups are worked out here from the
// node names report_tool.py read from the protos (every name path prefix two or more nodes
// share: docs/inspector.md), independently of the page's core, and compared with what the
// page draws: the top-level boxes after "collapse", each box's node count, the collapsed
// view's edges (the graph's edges mapped to the boxes showing their ends), a click expanding
// a group into its children, search reaching into a collapsed group, and a deep link to a
// hidden node expanding its groups.
"use strict";

// Name path prefixes of a node name, outermost first (split at '/' when it has one, else at
// '.'; the whole name last).
function prefixes(name) {
  if (!name) return [];
  const sep = name.includes("/") ? "/" : ".";
  const out = [];
  let at = name[0] === sep ? 1 : 0;
  for (;;) {
    const next = name.indexOf(sep, at);
    if (next < 0) break;
    if (next > at) out.push(name.slice(0, next));
    at = next + 1;
  }
  if (at < name.length) out.push(name);
  return out;
}

// {groups: Map path -> {nodes, parent}, top: [paths], outer(node, collapsed) -> path|null}.
function nameGroups(stage) {
  const counts = new Map();
  for (const n of stage.nodes) for (const p of prefixes(n.name)) counts.set(p, (counts.get(p) || 0) + 1);
  const groups = new Map();
  for (const n of stage.nodes) {
    let parent = null;
    for (const p of prefixes(n.name)) {
      if (counts.get(p) < 2) continue;
      if (!groups.has(p)) groups.set(p, {nodes: counts.get(p), parent});
      parent = p;
    }
  }
  const top = [...groups].filter(([, g]) => g.parent === null).map(([p]) => p);
  // The outermost group in `collapsed` holding node n (a path), or null.
  const outer = (n, collapsed) => prefixes(n.name).find((p) => groups.has(p) && collapsed.has(p)) || null;
  return {groups, top, outer};
}

const sorted = (xs) => JSON.stringify([...xs].sort());

// What the page draws: group boxes (paths), node boxes (indices), and its view's edges as
// item keys ("i:K" input, "n:I" node, "g:PATH" group).
async function drawn(page) {
  return page.evaluate(() => {
    const G = coil.app.graph, view = document.querySelector("#graph-view");
    const key = (item) => {
      const e = G.itemEls[item];
      if (e.dataset.groupIndex !== undefined) return "g:" + e.dataset.group;
      if (e.dataset.nodeIndex !== undefined) return "n:" + e.dataset.nodeIndex;
      return "i:" + e.dataset.inputIndex;
    };
    return {
      groups: [...view.querySelectorAll(".node.group")].map((e) => ({path: e.dataset.group, nodes: Number(e.dataset.groupNodes)})),
      nodes: [...view.querySelectorAll("[data-node-index]")].map((e) => Number(e.dataset.nodeIndex)),
      items: Number(view.dataset.itemCount),
      edges: G.layout.edges.map((e) => key(e[0]) + " -> " + key(e[1])),
      matches: [...view.querySelectorAll(".node.group.match")].map((e) => e.dataset.group),
      selected: [...view.querySelectorAll(".node.selected")].map((e) => e.dataset.nodeIndex),
    };
  });
}

// The collapsed view's edges worked out from the graph: each edge between the boxes showing
// its ends, none inside one box, each pair once.
function expectedEdges(stage, outer, collapsed) {
  const where = new Map();  // value id -> item key
  stage.input_ids.forEach((id, k) => where.set(id, "i:" + k));
  const keyOf = (n) => {
    const g = outer(n, collapsed);
    return g === null ? "n:" + n.index : "g:" + g;
  };
  for (const n of stage.nodes) for (const id of n.defines) where.set(id, keyOf(n));
  const edges = new Set();
  for (const n of stage.nodes) {
    for (const id of n.reads) {
      if (!where.has(id)) continue;  // a constant: not drawn
      const from = where.get(id), to = keyOf(n);
      if (from !== to) edges.add(from + " -> " + to);
    }
  }
  return edges;
}

module.exports = async function groupChecks(page, expect, {check, screenshot, showStage}) {
  const prims = expect.stages.find((s) => s.key === "prims");
  if (!check(prims !== undefined, "groups: the report has a prims stage")) return;
  await showStage(page, "prims", prims.count);
  const {groups, top, outer} = nameGroups(prims);
  let d = await drawn(page);
  check(d.groups.length === 0 && d.items === prims.inputs.length + prims.count,
        `groups: prims (${prims.count} nodes, under 400) opens expanded: ${d.items} boxes, ${d.groups.length} groups`);

  // "collapse": one box per top-level group, with its node count; the rest are nodes.
  await page.click("#groups-collapse");
  d = await drawn(page);
  const collapsed = new Set(top);
  check(top.length > 1 && sorted(d.groups.map((g) => g.path)) === sorted(top),
        `groups: collapse draws the ${top.length} top-level groups (${top.slice(0, 4).join(", ")}, ...): page ${d.groups.length}`);
  const badCounts = d.groups.filter((g) => !groups.has(g.path) || groups.get(g.path).nodes !== g.nodes);
  check(d.groups.length > 0 && badCounts.length === 0,
        `groups: every group box counts its nodes (${d.groups.map((g) => g.path + "=" + g.nodes).slice(0, 3).join(", ")}; wrong: ${JSON.stringify(badCounts)})`);
  const outside = prims.nodes.filter((n) => outer(n, collapsed) === null).map((n) => n.index);
  check(sorted(d.nodes) === sorted(outside),
        `groups: collapsed, the ${outside.length} nodes outside every group are drawn (page ${d.nodes.length})`);
  const want = expectedEdges(prims, outer, collapsed);
  check(want.size > 0 && sorted(d.edges) === sorted(want) && d.edges.length === want.size,
        `groups: the collapsed view's ${d.edges.length} edges are the graph's edges between its boxes (want ${want.size})`);
  await screenshot(page, "groups-collapsed");

  // A click on the largest group expands it into its children.
  const largest = [...top].sort((a, b) => groups.get(b).nodes - groups.get(a).nodes)[0];
  await page.click(`.node.group[data-group="${largest}"]`);
  d = await drawn(page);
  collapsed.delete(largest);
  for (const [p, g] of groups) if (g.parent === largest) collapsed.add(p);
  const shownGroups = [...collapsed].filter((p) => prims.nodes.some((n) => outer(n, collapsed) === p));
  const wantEdges = expectedEdges(prims, outer, collapsed);
  check(!d.groups.some((g) => g.path === largest) && sorted(d.groups.map((g) => g.path)) === sorted(shownGroups) &&
        sorted(d.edges) === sorted(wantEdges),
        `groups: a click expands ${largest} into its ${shownGroups.length - top.length + 1} child groups and nodes (boxes ${d.items}, edges ${d.edges.length} of ${wantEdges.size})`);

  // Search reaches into collapsed groups: a node name inside one highlights its box.
  const other = top.find((p) => p !== largest);
  const inner = prims.nodes.find((n) => outer(n, collapsed) === other && n.name !== other);
  if (check(inner !== undefined, `groups: a node inside collapsed ${other}`)) {
    await page.fill("#search", inner.name);
    d = await drawn(page);
    check(d.matches.includes(other), `groups: searching "${inner.name}" highlights collapsed ${other} (${d.matches})`);
    await page.fill("#search", "");
    // A deep link to the hidden node expands its groups and selects it.
    const id = await page.evaluate((i) => coil.app.graph.stage.graph.nodes[i].id, inner.index);
    await page.evaluate((h) => { location.hash = h; }, `#prims/${encodeURIComponent(id)}`);
    await page.waitForFunction((i) => document.querySelector(`.node.selected[data-node-index="${i}"]`), inner.index,
                               {timeout: 5000}).catch(() => {});
    d = await drawn(page);
    check(d.selected.includes(String(inner.index)) && !d.groups.some((g) => g.path === other),
          `groups: a deep link to node ${id} inside ${other} expands it and selects the node`);
  }
  await page.click("#groups-expand");
  d = await drawn(page);
  check(d.groups.length === 0 && d.nodes.length === prims.count,
        `groups: expand draws all ${prims.count} nodes again (page ${d.nodes.length})`);
};
