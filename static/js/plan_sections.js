// The plan page's long reference tables (assumptions, derivations): a filter box hides the rows that do not
// contain the typed words. Served locally (CSP: no inline scripts); the page works without it.
(function () {
  "use strict";
  function rowsOf(table) { return Array.prototype.slice.call(table.tBodies[0] ? table.tBodies[0].rows : []); }
  function apply(input) {
    var table = document.getElementById(input.dataset.filter);
    if (!table) { return; }
    var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    var rows = rowsOf(table), shown = 0;
    rows.forEach(function (row) {
      var text = row.textContent.toLowerCase();
      var inputs = row.querySelectorAll("input");
      for (var i = 0; i < inputs.length; i++) { text += " " + inputs[i].name.toLowerCase(); }
      var match = words.every(function (w) { return text.indexOf(w) !== -1; });
      row.hidden = !match;
      if (match) { shown += 1; }
    });
    var count = document.querySelector('[data-filter-count="' + input.dataset.filter + '"]');
    if (count) { count.textContent = words.length ? shown + " of " + rows.length + " shown" : ""; }
  }
  document.querySelectorAll("input[data-filter]").forEach(function (input) {
    input.addEventListener("input", function () { apply(input); });
  });
  // A link to a row inside a folded section (e.g. #explain-training-days) opens it.
  function openTarget() {
    if (!location.hash) { return; }
    var target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    var folded = target && target.closest("details");
    if (folded && !folded.open) { folded.open = true; target.scrollIntoView(); }
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
})();
