// Draw each server-built plotly figure: <div data-figure="ID"> takes the JSON in <script id="ID">.
(function () {
  document.querySelectorAll("div[data-figure]").forEach(function (div) {
    const source = document.getElementById(div.dataset.figure);
    if (!source || !window.Plotly) return;
    // json_script holds the figure's JSON text as a JSON string: parse twice.
    const figure = JSON.parse(JSON.parse(source.textContent));
    window.Plotly.newPlot(div, figure.data, figure.layout, { responsive: true, displaylogo: false });
  });
})();
