// Steps through the backward pass that chainrule.viz.walkthrough recorded (the JSON in
// #data, laid out by tools/walkthrough.py), or its forward-mode pass, switching between the
// two where both were recorded: draws the items of the open view that are in sight (a view
// of 10^5 nodes keeps a few hundred in the page), lights the node of each step, fills in
// gradients (tangents) as they arrive, and opens the boxes modules fold into.
(function () {
  "use strict";
  const started = performance.now();
  const data = JSON.parse(document.getElementById("data").textContent);
  const S = data.strings;
  const W = 170, H = 62, GX = 46, GY = 16, PAD = 14, MARGIN = 400, LISTED = 100, ROWS = 500, EDGES = 600, CELL = 1024;
  const $ = (id) => document.getElementById(id);
  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"})[c]);
  const txt = (k) => (k === undefined ? "" : S[k]);
  // A value in the side panel: its numbers never break across lines, its spaces may.
  const code = (t) => "<code>" + esc(t).replace(/-?\d[\d.e+-]*/g, "<span class=\"nb\">$&</span>") + "</code>";
  const cut = (t, n) => (t.length <= n ? t : t.slice(0, n - 1) + "\u2026");
  // What the page did, for whoever measures it: its load time, the last step's time, and how
  // many drawn elements that step changed (never more than are drawn: those in sight).
  const stats = {loadMs: 0, stepMs: 0, touched: 0, drawn: 0, edges: 0};
  window.walkthroughStats = stats;

  const boxes = data.boxes.map((b) => ({key: S[b[0]], name: S[b[1]], parent: b[2], size: 0}));
  const boxPath = (k) => { const p = []; for (; k >= 0; k = boxes[k].parent) p.unshift(k); return p; };
  const paths = boxes.map((_, k) => boxPath(k)), outside = [];  // each shared by the box's nodes
  const nodes = data.nodes.map((n) => ({
    label: n.label, kind: n.kind || "op", shape: txt(n.shape), value: txt(n.value), rule: txt(n.rule),
    module: txt(n.module), path: n.box === undefined ? outside : paths[n.box],
  }));
  nodes.forEach((n) => n.path.forEach((b) => boxes[b].size++));

  // A pass: the backward one (data.steps, in the engine's order) or the forward one
  // (data.forward, in topological order). For each node its step and number, and in the
  // backward pass what it received (sparse: [step, from, give]) and for each leaf the
  // broadcasts undone on the way to its .grad; for each box the steps of its nodes.
  function makePass(mode, steps) {
    const P = {mode: mode, steps: steps, total: steps.length, stepOf: new Int32Array(nodes.length),
      num: new Int32Array(nodes.length), received: [], undone: [], sweep: [], boxSteps: boxes.map(() => [])};
    steps.forEach((st, k) => {
      P.stepOf[st[0]] = k + 1;
      if (mode === "forward") return;
      st[3].forEach((g) => {
        (P.received[g[0]] = P.received[g[0]] || []).push([k + 1, st[0], g]);
        if (g[6] && g[6].fitted) (P.undone[g[0]] = P.undone[g[0]] || []).push([k + 1, st[0], g[6]]);
      });
    });
    data.nodes.forEach((n, i) => {  // the backward pass numbers its nodes in the sweep's order
      const num = mode === "forward" ? P.stepOf[i] : n.num || 0;
      P.num[i] = num;
      if (num) P.sweep[num - 1] = i;
      if (P.stepOf[i]) nodes[i].path.forEach((b) => P.boxSteps[b].push(P.stepOf[i]));
    });
    P.boxSteps.forEach((xs) => xs.sort((a, c) => a - c));
    return P;
  }
  const passes = {};
  if (data.steps.length) passes.backward = makePass("backward", data.steps);
  if (data.forward) passes.forward = makePass("forward", data.forward);
  let P = passes.backward || passes.forward;
  const name = (i) => (P.num[i] ? "#" + P.num[i] + " " : "") + nodes[i].label;
  const below = (xs, s, key = (x) => x) => {  // how many of xs (sorted by key) are at most s
    let lo = 0, hi = xs.length;
    while (lo < hi) { const m = (lo + hi) >> 1; if (key(xs[m]) <= s) lo = m + 1; else hi = m; }
    return lo;
  };
  const at = (i, s) => {  // node i's gradient (tangent) at step s, from the steps that made it
    const own = P.stepOf[i];
    if (own && own <= s) {
      const st = P.steps[own - 1];
      if (P.mode === "forward") return "tangent " + S[st[1]];
      return st.length > 4 ? ".grad " + S[st[4]] : "grad " + S[st[1]];
    }
    const got = P.received[i], k = got ? below(got, s, (h) => h[0]) : 0;
    if (!k) return "";
    const g = got[k - 1][2], x = g[6] || {}, now = x.total || x.given || [g[2]];
    return "grad " + S[now[0]] + (g[5] > 1 ? " (" + g[4] + " of " + g[5] + ")" : "");
  };

  // Views: 0 the whole graph, k + 1 box k's. A view's layout is read when it first opens.
  const viewOf = new Map(data.views.map((k, v) => [k, v]));
  const sections = document.querySelectorAll("section.view");
  const inView = (i, v) => v === 0 || nodes[i].path.indexOf(v - 1) >= 0;
  const codeOf = (i, v) => {
    const p = nodes[i].path, k = v === 0 ? 0 : p.indexOf(v - 1) + 1;
    return k < p.length ? 3 * p[k] + 2 : 3 * i;
  };
  const repOf = (code) => {  // an item's name in the page: n<node>, p<node> (a port) or b:<box>
    const k = Math.floor(code / 3);
    return code % 3 === 2 ? "b:" + boxes[k].key : (code % 3 ? "p" : "n") + k;
  };
  const laid = [];
  function layout(v) {
    if (laid[v]) return laid[v];
    const L = data.layouts[v], n = L.items.length / 3;
    const out = {code: new Int32Array(n), x: new Float64Array(n), y: new Float64Array(n),
      edges: Int32Array.from(L.edges), item: new Int32Array(3 * Math.max(nodes.length, boxes.length)).fill(-1),
      drawn: new Map(), drawnEdges: new Map()};  // item: each code's place, -1 where none
    for (let k = 0; k < n; k++) {
      out.code[k] = L.items[3 * k];
      out.x[k] = PAD + L.items[3 * k + 1] * (W + GX);
      out.y[k] = PAD + L.items[3 * k + 2] * (H + GY) / 2;
      out.item[out.code[k]] = k;
    }
    // Which items and edges lie in each CELL-pixel square: what is in sight is read from
    // the few squares in sight. An edge over more than 16 squares is in `long`, always read.
    out.cells = new Map();
    out.long = [];
    const put = (key, k) => { const c = out.cells.get(key); if (c) c.push(k); else out.cells.set(key, [k]); };
    for (let k = 0; k < n; k++) put(cell(out.x[k], out.y[k]), k);
    for (let k = 0; k < out.edges.length; k += 2) {
      const [x1, y1, x2, y2] = edgeBox(out, k);
      const cx1 = Math.floor(x1 / CELL), cy1 = Math.floor(y1 / CELL), cx2 = Math.floor(x2 / CELL), cy2 = Math.floor(y2 / CELL);
      if ((cx2 - cx1 + 1) * (cy2 - cy1 + 1) > 16) { out.long.push(k); continue; }
      for (let cx = cx1; cx <= cx2; cx++) for (let cy = cy1; cy <= cy2; cy++) put(-1 - (cx * 65536 + cy), k);
    }
    const sec = sections[v];
    sec.innerHTML = "<svg><g class=\"edges\"></g><g class=\"items\"></g></svg>";
    out.sec = sec;
    out.svg = sec.firstChild;
    out.svg.setAttribute("width", PAD * 2 + L.cols * (W + GX) - GX);
    out.svg.setAttribute("height", PAD * 2 + L.rows * (H + GY) - GY);
    out.edgeLayer = out.svg.firstChild;
    out.itemLayer = out.svg.lastChild;
    laid[v] = out;
    return out;
  }

  let view = 0, step = 0, timer = null, lit = null, gets = new Set();

  function itemMarkup(code) {
    const k = Math.floor(code / 3), type = code % 3;
    if (type === 2) {
      const b = boxes[k];
      return {cls: "item box", rep: repOf(code), box: b.key,
        html: "<title>" + esc(b.name) + ": " + b.size + " nodes; click to open</title>" +
          "<rect width=\"" + W + "\" height=\"" + H + "\" rx=\"4\"/>" +
          "<text class=\"t1\" x=\"8\" y=\"17\">" + esc(cut(b.name, 40)) + "</text>" +
          "<text class=\"t2\" x=\"8\" y=\"34\">" + b.size + " nodes \u25b8 open</text><text class=\"g\" x=\"8\" y=\"52\"></text>"};
    }
    const n = nodes[k], port = type === 1, kind = port ? "port" : n.kind;
    let sub = n.shape || n.value;
    if (!port && n.kind === "op" && n.module) sub = n.module;  // a node alone in its module
    const tip = (port ? "outside this box: " : "") + [n.label, n.shape, n.value, n.rule].filter((t) => t).join("\n");
    return {cls: "item " + kind, rep: repOf(code), node: k,
      html: "<title>" + esc(tip) + "</title><rect width=\"" + W + "\" height=\"" + H + "\" rx=\"" + (kind === "op" ? 4 : 1) + "\"/>" +
        "<text class=\"num\" x=\"" + (W - 6) + "\" y=\"14\">" + (P.num[k] ? "#" + P.num[k] : "") + "</text>" +
        "<text class=\"t1\" x=\"8\" y=\"17\">" + esc(cut(n.label, 40)) + "</text>" +
        "<text class=\"t2\" x=\"8\" y=\"34\">" + esc(cut(sub, 40)) + "</text><text class=\"g\" x=\"8\" y=\"52\"></text>"};
  }

  // The square an item's corner is in, and the box an edge (its ends' items) spans.
  const cell = (x, y) => Math.floor(x / CELL) * 65536 + Math.floor(y / CELL);
  function edgeBox(L, k) {
    const a = L.edges[k], b = L.edges[k + 1];
    return [Math.min(L.x[a], L.x[b]), Math.min(L.y[a], L.y[b]), Math.max(L.x[a], L.x[b]) + W, Math.max(L.y[a], L.y[b]) + H];
  }

  function edgePath(L, a, b) {
    const x1 = L.x[a] + W, y1 = L.y[a] + H / 2, x2 = L.x[b], y2 = L.y[b] + H / 2;
    if (x2 > x1) { const m = (x1 + x2) / 2; return "M" + x1 + "," + y1 + " C" + m + "," + y1 + " " + m + "," + y2 + " " + x2 + "," + y2; }
    // into the next band: round, along the empty row between the bands
    const gap = y2 > y1 ? L.y[b] - (H + GY) / 2 : L.y[a] - (H + GY) / 2;
    return "M" + x1 + "," + y1 + " h" + GX / 2 + " V" + gap + " H" + (x2 - GX / 2) + " V" + y2 + " H" + x2;
  }

  // Draw what is in sight of view v (and a margin), drop what left it.
  function draw() {
    const L = layout(view), g = $("graph");
    const left = g.scrollLeft - L.sec.offsetLeft - MARGIN, top = g.scrollTop - L.sec.offsetTop - MARGIN;
    const right = left + g.clientWidth + 2 * MARGIN, bottom = top + g.clientHeight + 2 * MARGIN;
    const seen = (x1, y1, x2, y2) => x2 >= left && x1 <= right && y2 >= top && y1 <= bottom;
    const sight = [left, top, right, bottom].join();
    if (L.sight === sight) { paint(L); return; }  // nothing came into sight or left it
    L.sight = sight;
    const fresh = [], items = new Set(), edges = new Set(L.long);
    for (let cx = Math.max(0, Math.floor((left - W) / CELL)); cx <= Math.floor(right / CELL); cx++) {
      for (let cy = Math.max(0, Math.floor((top - H) / CELL)); cy <= Math.floor(bottom / CELL); cy++) {
        (L.cells.get(cx * 65536 + cy) || []).forEach((k) => items.add(k));
        (L.cells.get(-1 - (cx * 65536 + cy)) || []).forEach((k) => edges.add(k));
      }
    }
    L.drawn.forEach((el, k) => { if (!items.has(k)) { el.remove(); L.drawn.delete(k); } });
    for (const k of items) {
      const on = seen(L.x[k], L.y[k], L.x[k] + W, L.y[k] + H), el = L.drawn.get(k);
      if (on && !el) {
        const m = itemMarkup(L.code[k]), e = document.createElementNS(L.svg.namespaceURI, "g");
        e.setAttribute("class", m.cls);
        e.dataset.rep = m.rep;
        if (m.box !== undefined) e.dataset.box = m.box; else e.dataset.node = m.node;
        e.setAttribute("transform", "translate(" + L.x[k] + "," + L.y[k] + ")");
        e.innerHTML = m.html;
        e.code = L.code[k];
        L.itemLayer.appendChild(e);
        L.drawn.set(k, e);
        fresh.push(e);
      } else if (!on && el) { el.remove(); L.drawn.delete(k); }
    }
    // An edge in sight is drawn if both its ends are, the others while there are few (a node
    // of 10^4 inputs would draw a fan of 10^4 lines through the view).
    const near = [], far = [];
    for (const k of edges) {
      if (!seen(...edgeBox(L, k))) continue;
      (L.drawn.has(L.edges[k]) && L.drawn.has(L.edges[k + 1]) ? near : far).push(k);
    }
    const wanted = new Set(near.concat(far.slice(0, Math.max(0, EDGES - near.length))));
    L.drawnEdges.forEach((el, k) => { if (!wanted.has(k)) { el.remove(); L.drawnEdges.delete(k); } });
    for (const k of wanted) {
      const a = L.edges[k], b = L.edges[k + 1];
      if (!L.drawnEdges.has(k)) {
        const e = document.createElementNS(L.svg.namespaceURI, "path");
        e.setAttribute("class", "edge");
        e.setAttribute("d", edgePath(L, a, b));
        e.from = L.code[a];
        e.to = L.code[b];
        e.dataset.from = repOf(e.from);
        e.dataset.to = repOf(e.to);
        L.edgeLayer.appendChild(e);
        L.drawnEdges.set(k, e);
      }
    }
    fit(fresh);
    stats.drawn = L.drawn.size;
    stats.edges = L.drawnEdges.size;
    paint(L);
  }

  // A text wider than its room is narrowed to fit (read all, then write all: one layout).
  function fit(els) {
    const wide = [];
    els.forEach((e) => {
      const num = e.querySelector(".num"), room = num ? num.getComputedTextLength() : 0;
      e.querySelectorAll(".t1, .t2, .g").forEach((t, j) => {
        const fits = W - 14 - (j === 0 && room ? room + 6 : 0), len = t.getComputedTextLength();
        if (len > fits) wide.push([t, fits]);
      });
    });
    wide.forEach(([t, fits]) => { t.setAttribute("textLength", fits); t.setAttribute("lengthAdjust", "spacingAndGlyphs"); });
  }

  // Bring the drawn items and edges of view to step `step`, writing only what changed.
  function paint(L) {
    const s = step;
    let touched = 0;
    L.drawn.forEach((el) => {
      const code = el.code, type = code % 3, k = Math.floor(code / 3);
      let text = "", done = false;
      if (type === 2) {
        const steps = P.boxSteps[k], swept = below(steps, s);
        text = s ? swept + " of " + steps.length + (P.mode === "forward" ? " pushed" : " swept") : "";
        done = s > 0 && swept === steps.length;
      } else if (s) {
        text = at(k, s);
        done = P.stepOf[k] > 0 && P.stepOf[k] < s;
      }
      const state = (code === lit ? "lit" : gets.has(code) ? "gets" : "") + (done ? " done" : "") + "|" + text;
      if (el.state === state) return;
      el.state = state;
      el.classList.toggle("lit", code === lit);
      el.classList.toggle("gets", code !== lit && gets.has(code));
      el.classList.toggle("done", done);
      el.lastChild.textContent = text;
      el.lastChild.removeAttribute("textLength");
      if (text.length > 24) fit([el]);
      touched++;
    });
    L.drawnEdges.forEach((e) => {
      const hot = lit !== null && e.to === lit && gets.has(e.from);
      if (hot !== e.classList.contains("hot")) { e.classList.toggle("hot", hot); touched++; }
    });
    stats.touched += touched;
  }

  function open(v) {
    if (laid[view]) sections[view].hidden = true;
    view = v;
    layout(v);
    sections[v].hidden = false;
    $("graph").scrollTo(0, 0);
    const crumbs = [-1].concat(v ? boxPath(v - 1) : []);
    $("crumbs").innerHTML = crumbs.map((b) => {
      const label = b < 0 ? "whole graph" : boxes[b].name;
      return b + 1 === v ? "<b>" + esc(label) + "</b>"
        : "<a href=\"#\" data-view=\"" + esc(b < 0 ? "" : boxes[b].key) + "\">" + esc(label) + "</a>";
    }).join(" \u203a ");
    render();
  }

  // Show step `step`; where it was stepped to (follow) and its node is outside the open box,
  // first go up to the box it is in (a box the reader opened stays open).
  function render(follow) {
    const s = step, cur = s > 0 ? P.steps[s - 1] : null, total = P.total;
    if (follow && cur && !inView(cur[0], view)) {
      const p = nodes[cur[0]].path, k = view ? p.indexOf(view - 1) : -1;
      open(k >= 0 ? p[k] + 1 : 0);
      return;
    }
    $("counter").textContent = "step " + s + " / " + total;
    $("slider").value = s;
    lit = cur ? codeOf(cur[0], view) : null;
    gets = new Set(cur ? cur[3].map((g) => codeOf(g[0], view)) : []);
    const L = layout(view), g = $("graph");
    const code = lit !== null ? lit : total ? codeOf(P.steps[0][0], view) : -1;  // step 0: the first
    const k = code >= 0 ? L.item[code] : -1;
    if (k >= 0) {  // in sight, or scrolled to the middle
      const x = L.x[k] + L.sec.offsetLeft, y = L.y[k] + L.sec.offsetTop;
      if (x < g.scrollLeft || x + W > g.scrollLeft + g.clientWidth || y < g.scrollTop || y + H > g.scrollTop + g.clientHeight) {
        g.scrollTo(x - (g.clientWidth - W) / 2, y - (g.clientHeight - H) / 2);
      }
    }
    draw();
    $("panel").dataset.node = cur ? cur[0] : "";
    $("panel").innerHTML = cur ? (P.mode === "forward" ? tell(s, cur) : describe(s, cur)) : order();
    $("leaves").classList.toggle("ready", s === total);  // shows each row's .grad
  }

  // One sentence, in both modes' step 0: the two passes are the chain rule's two orders.
  const BOTH = "<p class=\"both\">Both modes apply the chain rule on this one graph: backward mode " +
    "pulls a gradient from the root to every leaf (J<sup>T</sup> g, one pass per output), forward mode " +
    "pushes a tangent from the leaves to the root (J t, one pass per direction).</p>";

  function order() {
    const sweep = P.sweep;
    const more = sweep.length > LISTED ? "<p>\u2026 and " + (sweep.length - LISTED) + " more, each at its step.</p>" : "";
    const how = P.mode === "forward"
      ? "<p>Forward mode (<code>torch.autograd.forward_ad</code>): each leaf given a tangent is a dual " +
        "tensor, its primal and its tangent. The graph is sorted so that every node comes after all of " +
        "its inputs; each node is numbered by its place. Step <i>k</i> pushes the tangents of node " +
        "#<i>k</i>'s inputs through its jvp rule: its tangent is the sum of their parts, J t.</p>"
      : "<p>The engine sorts the graph so that every node comes " +
        "after all of its consumers, starting at the root; each node is numbered by its place. " +
        "Step <i>k</i> sweeps node #<i>k</i>: its gradient is complete by then, and its rule " +
        "hands a gradient to each of its inputs.</p>";
    return "<h2>Step 0: the order</h2>" + how + BOTH + "<ol>" +
      sweep.slice(0, LISTED).map((i) => "<li>" + esc(nodes[i].label) + (nodes[i].shape ? " <small>" +
        esc(nodes[i].shape) + "</small>" : "") + "</li>").join("") + "</ol>" + more;
  }

  function describe(s, st) {
    const n = nodes[st[0]], out = [], grad = S[st[2]];
    out.push("<h2>Step " + s + ": " + esc(name(st[0])) + "</h2>");
    if (n.shape) out.push("<p class=\"shape\">" + esc(n.shape) + "</p>");
    if (n.value) out.push("<p>forward value: " + code(n.value) + "</p>");
    const got = P.received[st[0]] || [];
    if (got.length > 1) {
      out.push("<p>Its gradient is the sum of what its " + got.length + " consumers handed it:</p><ul>" +
        got.slice(0, LISTED).map((r) => {
          const x = r[2][6] || {};
          return "<li>from " + esc(name(r[1])) + ": " + code(S[(x.given || [0, r[2][3]])[1]]) + "</li>";
        }).join("") + "</ul>");
    } else if (!got.length) {
      out.push("<p>The root: its gradient is the seed.</p>");
    }
    out.push("<p>incoming gradient: " + code(grad) + "</p>");
    if (n.kind !== "op") {
      out.push("<p>A leaf: the gradient is added to its <code>.grad</code>, now " +
        code(S[st.length > 4 ? st[5] : st[2]]) + ".</p>");
    } else {
      out.push("<p>rule: " + code(n.rule) + "</p><ul class=\"gives\">");
      st[3].slice(0, LISTED).forEach((g) => {
        const x = g[6] || {};
        let li = "<li><b>" + esc(S[g[1]]) + "</b> = " + esc(name(g[0])) + " gets ";
        li += code(x.local !== undefined ? grad + " \u00d7 " + x.local + " = " + S[g[3]] : S[g[3]]);
        if (x.fitted) li += "<div class=\"bcast\">" + broadcast(x) + "</div>";
        if (x.cast) li += "<div class=\"bcast\">cast from " + esc(x.cast) + "</div>";
        if (g[5] > 1) {
          li += "<div class=\"sum\">its gradient so far (" + g[4] + " of " + g[5] + " contributions): " +
            code(S[x.total[1]]) + "</div>";
        }
        out.push(li + "</li>");
      });
      out.push("</ul>" + (st[3].length > LISTED ? "<p>\u2026 and " + (st[3].length - LISTED) + " more inputs.</p>" : ""));
    }
    if (s === P.total) out.push(done());
    return out.join("");
  }

  // A step of the forward pass: the tangent each input carries, the part it contributes
  // through the jvp rule, and their sum, the node's tangent.
  function tell(s, st) {
    const n = nodes[st[0]], out = [];
    out.push("<h2>Step " + s + ": " + esc(name(st[0])) + "</h2>");
    if (n.shape) out.push("<p class=\"shape\">" + esc(n.shape) + "</p>");
    if (n.value) out.push("<p>primal: " + code(n.value) + "</p>");
    if (!st[3].length) {
      out.push("<p>A leaf given a tangent, as <code>make_dual(primal, tangent)</code> makes it: " +
        "its tangent is the seed.</p>");
    } else {
      out.push("<p>jvp rule: " + code(S[st[4]]) + "</p><ul class=\"gives\">");
      st[3].slice(0, LISTED).forEach((g) => {
        out.push("<li><b>" + esc(S[g[1]]) + "</b> = " + esc(name(g[0])) + " carries tangent " + code(S[g[3]]) +
          "<div class=\"sum\">its part of the tangent: " + code(S[g[5]]) + "</div></li>");
      });
      out.push("</ul>" + (st[3].length > LISTED ? "<p>\u2026 and " + (st[3].length - LISTED) + " more inputs.</p>" : ""));
      if (st[3].length > 1) out.push("<p>The node's tangent is the sum of the " + st[3].length + " parts.</p>");
    }
    out.push("<p>tangent: " + code(S[st[2]]) + "</p>");
    if (s === P.total) {
      out.push("<h3>The pass is done</h3><p>The tangent of " + esc(name(st[0])) + " is the directional " +
        "derivative along the leaves' tangents, what <code>torch.func.jvp</code> returns. For a root of one " +
        "element, the backward pass gives the same number: the sum over the leaves of &lt;leaf.grad, tangent&gt;.</p>");
    }
    return out.join("");
  }

  function broadcast(x) {
    const dims = x.dims.length === 1 ? "dim " + x.dims[0] : "dims " + x.dims.join(", ");
    return "broadcast: the rule's gradient " + esc(x.fitted[0]) + " summed over " + dims +
      " to the input's " + esc(x.fitted[1]) + ": " + code(S[x.given[1]]);
  }

  // The last step: the pass is over; every leaf's .grad, and the broadcasts each undid.
  function done() {
    const leaves = data.leaves.slice(0, LISTED).map((l) => {
      const n = nodes[l.node];
      return "<li><b>" + esc(l.name) + "</b>" + (n.shape ? " <small>" + esc(n.shape) + "</small>" : "") +
        ": " + code(l.text) + (P.undone[l.node] || []).map((u) =>
        "<div class=\"bcast\">at step " + u[0] + " (" + esc(name(u[1])) + "), " + broadcast(u[2]) + "</div>").join("") + "</li>";
    });
    const more = data.leaves.length > LISTED ? "<p>\u2026 and " + (data.leaves.length - LISTED) + " more, in the table below.</p>" : "";
    return "<h3>The pass is done</h3><p>Each leaf's <code>.grad</code>:</p><ul class=\"done\">" + leaves.join("") + "</ul>" + more;
  }

  function go(s) {
    const t = performance.now();
    stats.touched = 0;
    step = Math.max(0, Math.min(P.total, s));
    render(true);
    if (step === P.total) pause();
    stats.stepMs = performance.now() - t;
  }
  function pause() { if (timer) { clearInterval(timer); timer = null; } $("play").textContent = "play"; }
  function play() {
    if (timer) { pause(); return; }
    if (step === P.total) go(0);
    $("play").textContent = "pause";
    timer = setInterval(() => go(step + 1), 900);
  }

  $("first").onclick = () => go(0);
  $("prev").onclick = () => go(step - 1);
  $("next").onclick = () => go(step + 1);
  $("play").onclick = play;
  $("slider").oninput = (e) => go(+e.target.value);
  document.addEventListener("keydown", (e) => {
    // A focused slider moves itself with the arrows, a focused button clicks on space.
    if (e.target.tagName === "INPUT" || e.target.tagName === "BUTTON" && e.key === " ") return;
    if (e.key === "ArrowRight") { go(step + 1); e.preventDefault(); }
    else if (e.key === "ArrowLeft") { go(step - 1); e.preventDefault(); }
    else if (e.key === " ") { play(); e.preventDefault(); }
    else if (e.key === "Home") go(0);
    else if (e.key === "End") go(P.total);
  });
  // The leaves' table: ROWS rows at a time, the next ones as its last row comes into sight.
  const body = document.querySelector("#leaves tbody");
  let listed = 0;
  function more() {
    const rows = data.leaves.slice(listed, listed + ROWS).map((l) =>
      "<tr data-leaf=\"" + esc(l.name) + "\" data-node=\"" + l.node + "\" data-grad=\"" + esc(JSON.stringify(l.grad)) +
      "\"><td>" + esc(l.name) + "</td><td class=\"final\"><span class=\"wait\">\u2014</span><span class=\"text\">" +
      esc(l.text) + "</span></td></tr>");
    listed += rows.length;
    body.insertAdjacentHTML("beforeend", rows.join(""));
    if (listed < data.leaves.length) sentinel.observe(body.lastElementChild);
  }
  const sentinel = new IntersectionObserver((seen) => {
    if (seen.some((e) => e.isIntersecting)) { sentinel.disconnect(); more(); }
  });
  more();
  let queued = false;
  $("graph").addEventListener("scroll", () => {
    if (!queued) { queued = true; requestAnimationFrame(() => { queued = false; draw(); }); }
  });
  window.addEventListener("resize", () => draw());
  $("graph").addEventListener("click", (e) => {
    const box = e.target.closest(".box");
    if (box) open(viewOf.get(box.dataset.box));
  });
  $("crumbs").addEventListener("click", (e) => {
    const a = e.target.closest("a");
    if (a) { e.preventDefault(); open(viewOf.get(a.dataset.view)); }
  });
  // The switch between the passes, where both were recorded: the drawn items are drawn
  // again (their numbers are the pass's), and the pass starts at its step 0.
  const TITLES = {backward: "The backward pass, step by step", forward: "The forward-mode pass, step by step"};
  function use(mode) {
    pause();
    P = passes[mode];
    laid.forEach((L) => { L.drawn.forEach((el) => el.remove()); L.drawn.clear(); L.sight = null; });
    $("title").textContent = TITLES[mode];
    $("slider").max = P.total;
    $("leaves").hidden = mode === "forward";  // the leaves' .grad: the backward pass's
    document.querySelectorAll("#modes button").forEach((b) => b.classList.toggle("on", b.dataset.mode === mode));
    step = 0;
    render();
  }
  if (passes.backward && passes.forward) {
    $("modes").innerHTML = "<button type=\"button\" data-mode=\"backward\" title=\"gradients from the root to the leaves\">backward</button>" +
      "<button type=\"button\" data-mode=\"forward\" title=\"tangents from the leaves to the root\">forward</button>";
    $("modes").addEventListener("click", (e) => { const b = e.target.closest("button"); if (b) use(b.dataset.mode); });
  }
  $("title").textContent = TITLES[P.mode];
  $("leaves").hidden = P.mode === "forward";
  document.querySelectorAll("#modes button").forEach((b) => b.classList.toggle("on", b.dataset.mode === P.mode));
  open(0);
  stats.loadMs = performance.now() - started;
})();
