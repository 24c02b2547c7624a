// Draw each server-built chart: <div data-figure="ID"> takes the plotly figure (data + layout) in <script id="ID">.
// The figures are complete (values, labels, ticks, colours, hover text come from planner/outputs/charts.py);
// this file only hands them to plotly.js (the basic bundle: scatter and bar traces).
(function () {
  if (!window.Plotly) return;
  document.querySelectorAll("div[data-figure]").forEach(function (div) {
    const source = document.getElementById(div.dataset.figure);
    if (!source) return;
    const figure = JSON.parse(source.textContent);
    window.Plotly.newPlot(div, figure.data, figure.layout, {
      responsive: true,
      displaylogo: false,
      modeBarButtonsToRemove: ["select2d", "lasso2d", "autoScale2d", "toggleSpikelines"],
    });
  });
})();
