// Draw each server-built chart: <div data-figure="ID"> takes the plotly figure (data + layout) in <script id="ID">.
// The figures are complete (values, labels, ticks, colours, hover text come from planner/outputs/charts.py);
// this file only hands them to plotly.js (the basic bundle: scatter and bar traces).
(function () {
  if (!window.Plotly) return;
  document.querySelectorAll("div[data-figure]").forEach(function (div) {
    const source = document.getElementById(div.dataset.figure);
    if (!source) return;
    const figure = JSON.parse(source.textContent);
    // No mode bar: the charts are read, not edited (hover still shows each value with its unit).
    window.Plotly.newPlot(div, figure.data, figure.layout, { responsive: true, displayModeBar: false });
  });
})();
