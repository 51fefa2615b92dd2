// The report's behaviour: tabs, and selecting a source line. Every element made from a
// source line lists its key in `data-locs` ("L0 L3"), so one selector finds them all.
(function () {
  "use strict";
  const LIMIT = 200; // the most copies of IR or C lines the selection panel lists
  const tabs = Array.from(document.querySelectorAll(".tabs button"));
  const panel = document.getElementById("selection");

  function show(name) {
    tabs.forEach(function (b) { b.classList.toggle("active", b.dataset.tab === name); });
    document.querySelectorAll(".panel").forEach(function (p) { p.hidden = p.id !== "tab-" + name; });
  }

  function reveal(element) {
    const tab = element.closest(".panel");
    if (tab) show(tab.id.slice(4));
    const details = element.closest("details");
    if (details) details.open = true;
    element.scrollIntoView({ block: "center" });
  }

  function copies(target, originals) {
    target.textContent = "";
    originals.slice(0, LIMIT).forEach(function (original) {
      const copy = original.cloneNode(true);
      copy.classList.remove("hit");
      copy.removeAttribute("id");
      copy.title = "show it in its tab";
      copy.addEventListener("click", function () { reveal(original); });
      target.appendChild(copy);
    });
    if (originals.length > LIMIT) {
      const more = document.createElement("div");
      more.textContent = "… and " + (originals.length - LIMIT) + " more";
      target.appendChild(more);
    }
    if (!originals.length) target.textContent = "none";
  }

  function kernels(target, found) {
    target.textContent = found.length ? "" : "none";
    found.forEach(function (section) {
      const link = document.createElement("a");
      link.href = "#";
      link.textContent = section.querySelector("h3 code").textContent;
      link.addEventListener("click", function (event) { event.preventDefault(); reveal(section); });
      target.appendChild(link);
    });
  }

  function select(key) {
    document.querySelectorAll(".hit").forEach(function (e) { e.classList.remove("hit"); });
    const found = Array.from(document.querySelectorAll('[data-locs~="' + key + '"]'));
    found.forEach(function (e) { e.classList.add("hit"); });
    const row = found.find(function (e) { return e.matches("tr.src"); });
    panel.querySelector(".sel-title").textContent = row
      ? "line " + row.dataset.line + ": " + row.querySelector("td.text").textContent.trim()
      : key;
    const finalStage = document.querySelector("#tab-ir .stage:last-child");
    copies(panel.querySelector(".sel-ir"), found.filter(function (e) {
      return e.classList.contains("ir-line") && finalStage && finalStage.contains(e);
    }));
    kernels(panel.querySelector(".sel-kernels"), found.filter(function (e) { return e.matches("section.kernel"); }));
    copies(panel.querySelector(".sel-c"), found.filter(function (e) { return e.classList.contains("c-line"); }));
    panel.hidden = false;
    const active = document.querySelector(".panel:not([hidden])");
    const first = active && active.querySelector(".hit");
    if (first) first.scrollIntoView({ block: "nearest" });
  }

  tabs.forEach(function (b) { b.addEventListener("click", function () { show(b.dataset.tab); }); });
  document.querySelectorAll("a[data-show]").forEach(function (a) {
    a.addEventListener("click", function () { show(a.dataset.show); });
  });
  document.querySelectorAll('#c-code a[href^="#c-def-"]').forEach(function (a) {
    a.addEventListener("click", function (event) {
      const target = document.getElementById(a.getAttribute("href").slice(1));
      if (target) { event.preventDefault(); reveal(target); }
    });
  });
  document.querySelectorAll("tr.src[data-locs]").forEach(function (row) {
    row.addEventListener("click", function () { select(row.dataset.locs); });
    row.addEventListener("keydown", function (event) {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); select(row.dataset.locs); }
    });
  });
  document.querySelectorAll("svg.graph .node[data-locs]").forEach(function (node) {
    const key = node.dataset.locs.split(" ")[0];
    if (key) node.addEventListener("click", function () { select(key); });
  });
})();
