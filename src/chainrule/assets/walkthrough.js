// Steps through the backward pass that chainrule.viz.walkthrough recorded (the JSON in
// #data): lights the node of each step, fills in gradients as they arrive, and opens the
// boxes modules fold into. The drawing itself is made in Python; this only changes classes
// and texts in it.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("data").textContent);
  const nodes = data.nodes, steps = data.steps, total = steps.length;
  const $ = (id) => document.getElementById(id);
  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"})[c]);
  const name = (i) => (nodes[i].num !== null ? "#" + nodes[i].num + " " : "") + nodes[i].label;

  // Each node's gradient over the pass: [step, short, full, how far], and what it received.
  const hist = nodes.map(() => []), received = nodes.map(() => []), stepOf = {};
  steps.forEach((st, k) => {
    const s = k + 1;
    stepOf[st.node] = s;
    const own = st.final ? [s, ".grad " + st.final[0], st.final[1], ""] : [s, "grad " + st.grad[0], st.grad[1], ""];
    hist[st.node].push(own);
    st.gives.forEach((g) => {
      hist[g.to].push([s, "grad " + g.total[0], g.total[1], g.of > 1 ? g.part + " of " + g.of : ""]);
      received[g.to].push([s, st.node, g]);
    });
  });
  const at = (i, s) => {
    let last = null;
    for (const h of hist[i]) { if (h[0] <= s) last = h; else break; }
    return last;
  };

  // The views: the whole graph, and one per box; each knows its items by node. Maps keyed by
  // the user's module names have no prototype: a module named "constructor" is a box as any.
  const views = Object.create(null);
  document.querySelectorAll("section.view").forEach((sec) => {
    const items = {};
    sec.querySelectorAll(".item").forEach((el) => { items[el.dataset.rep] = el; });
    views[sec.dataset.view] = {sec: sec, items: items};
  });
  const boxes = Object.create(null);
  nodes.forEach((n, i) => n.path.forEach((b) => { (boxes[b] = boxes[b] || []).push(i); }));
  const inView = (i, v) => v === "" || nodes[i].path.indexOf(v) >= 0;
  const repOf = (i, v) => {
    const p = nodes[i].path, k = v === "" ? 0 : p.indexOf(v) + 1;
    return k < p.length ? "b:" + p[k] : "n" + i;
  };
  let view = "", step = 0, timer = null;

  function open(v) {
    if (!(v in views)) return;
    views[view].sec.hidden = true;
    view = v;
    views[view].sec.hidden = false;
    $("graph").scrollTo(0, 0);
    const crumbs = [""].concat(data.views.filter((k) => k && (v === k || v.startsWith(k + "."))));
    $("crumbs").innerHTML = crumbs.map((k) => k === v
      ? "<b>" + esc(k || "whole graph") + "</b>"
      : '<a href="#" data-view="' + esc(k) + '">' + esc(k || "whole graph") + "</a>").join(" \u203a ");
    render();
  }

  function render() {
    const s = step, cur = s > 0 ? steps[s - 1] : null;
    if (cur && !inView(cur.node, view)) {  // the node is outside this box: up to where it is
      const p = nodes[cur.node].path.filter((k) => view === k || view.startsWith(k + "."));
      open(p.length ? p[p.length - 1] : "");
      return;
    }
    $("counter").textContent = "step " + s + " / " + total;
    $("slider").value = s;
    const v = views[view];
    const lit = cur ? repOf(cur.node, view) : null;
    const gets = new Set(cur ? cur.gives.map((g) => repOf(g.to, view)) : []);
    for (const rep in v.items) {
      const el = v.items[rep], g = el.querySelector("text.g");
      el.classList.toggle("lit", rep === lit);
      el.classList.toggle("gets", gets.has(rep) && rep !== lit);
      if (el.dataset.box !== undefined) {
        const members = boxes[el.dataset.box];
        const swept = members.filter((i) => stepOf[i] !== undefined && stepOf[i] <= s).length;
        g.textContent = s ? swept + " of " + members.length + " swept" : "";
        el.classList.toggle("done", swept === members.length && s > 0);
      } else {
        const i = +el.dataset.node, h = s ? at(i, s) : null;
        g.textContent = h ? h[1] + (h[3] ? " (" + h[3] + ")" : "") : "";
        el.classList.toggle("done", stepOf[i] !== undefined && stepOf[i] < s);
      }
    }
    v.sec.querySelectorAll("path.edge").forEach((e) => {
      e.classList.toggle("hot", lit !== null && e.dataset.to === lit && gets.has(e.dataset.from));
    });
    if (lit && v.items[lit]) v.items[lit].scrollIntoView({block: "nearest", inline: "nearest"});
    $("panel").dataset.node = cur ? cur.node : "";
    $("panel").innerHTML = cur ? describe(s, cur) : order();
    document.querySelectorAll("#leaves tr[data-leaf]").forEach((tr) => {
      const leaf = data.leaves.find((l) => String(l.node) === tr.dataset.node);
      tr.querySelector(".final").textContent = s === total ? leaf.text : "\u2014";
    });
    $("leaves").classList.toggle("ready", s === total);
  }

  function order() {
    const sweep = nodes.map((n, i) => i).filter((i) => nodes[i].num !== null)
      .sort((a, b) => nodes[a].num - nodes[b].num);
    return "<h2>Step 0: the order</h2><p>The engine sorts the graph so that every node comes " +
      "after all of its consumers, starting at the root; each node is numbered by its place. " +
      "Step <i>k</i> sweeps node #<i>k</i>: its gradient is complete by then, and its rule " +
      "hands a gradient to each of its inputs.</p><ol>" +
      sweep.map((i) => "<li>" + esc(nodes[i].label) + (nodes[i].shape ? " <small>" +
        esc(nodes[i].shape) + "</small>" : "") + "</li>").join("") + "</ol>";
  }

  function describe(s, st) {
    const n = nodes[st.node], out = [];
    out.push("<h2>Step " + s + ": " + esc(name(st.node)) + "</h2>");
    if (n.shape) out.push("<p class=\"shape\">" + esc(n.shape) + "</p>");
    if (n.value) out.push("<p>forward value: <code>" + esc(n.value) + "</code></p>");
    const got = received[st.node];
    if (got.length > 1) {
      out.push("<p>Its gradient is the sum of what its " + got.length + " consumers handed it:</p><ul>" +
        got.map((r) => "<li>from " + esc(name(r[1])) + ": <code>" + esc(r[2].fitted ? r[2].given[1] : r[2].raw[1]) +
          "</code></li>").join("") + "</ul>");
    } else if (!got.length) {
      out.push("<p>The root: its gradient is the seed.</p>");
    }
    out.push("<p>incoming gradient: <code>" + esc(st.grad[1]) + "</code></p>");
    if (n.kind !== "op") {
      out.push("<p>A leaf: the gradient is added to its <code>.grad</code>, now <code>" +
        esc(st.final ? st.final[1] : st.grad[1]) + "</code>.</p>");
      return out.join("");
    }
    out.push("<p>rule: <code>" + esc(n.rule) + "</code></p><ul class=\"gives\">");
    st.gives.forEach((g) => {
      let li = "<li><b>" + esc(g.role) + "</b> = " + esc(name(g.to)) + " gets ";
      li += g.local !== undefined ? "<code>" + esc(st.grad[1]) + " \u00d7 " + esc(g.local) + " = " +
        esc(g.raw[1]) + "</code>" : "<code>" + esc(g.raw[1]) + "</code>";
      if (g.fitted) {
        const dims = g.dims.length === 1 ? "dim " + g.dims[0] : "dims " + g.dims.join(", ");
        li += "<div class=\"bcast\">broadcast: the rule's gradient " + esc(g.fitted[0]) + " summed over " +
          dims + " to the input's " + esc(g.fitted[1]) + ": <code>" + esc(g.given[1]) + "</code></div>";
      }
      if (g.cast) li += "<div class=\"bcast\">cast from " + esc(g.cast) + "</div>";
      if (g.of > 1) {
        li += "<div class=\"sum\">its gradient so far (" + g.part + " of " + g.of + " contributions): <code>" +
          esc(g.total[1]) + "</code></div>";
      }
      out.push(li + "</li>");
    });
    out.push("</ul>");
    return out.join("");
  }

  function go(s) {
    step = Math.max(0, Math.min(total, s));
    render();
    if (step === total) pause();
  }
  function pause() { if (timer) { clearInterval(timer); timer = null; } $("play").textContent = "play"; }
  function play() {
    if (timer) { pause(); return; }
    if (step === total) go(0);
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
    else if (e.key === "End") go(total);
  });
  $("graph").addEventListener("click", (e) => {
    const box = e.target.closest(".box");
    if (box) open(box.dataset.box);
  });
  $("crumbs").addEventListener("click", (e) => {
    const a = e.target.closest("a");
    if (a) { e.preventDefault(); open(a.dataset.view); }
  });
  views[""].sec.hidden = false;
  open("");
})();
