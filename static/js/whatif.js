// The what-if panel: each field (named by its request path, e.g. pricing.utilization) is sent to
// POST /api/plans/{id}/whatif/ as it moves; the verdict and headline costs update in place. Only fields that
// differ from the plan's own values are sent. The deadline is not sent: it changes the sizing (a new plan).
(function () {
  const form = document.getElementById("whatif-form");
  if (!form) return;
  const csrf = form.querySelector("input[name=csrfmiddlewaretoken]").value;
  const numbers = Array.from(form.querySelectorAll("input[type=number]"));
  const choice = document.getElementById("whatif-choice");
  const sentence = document.getElementById("whatif-sentence");
  const state = document.getElementById("whatif-state");
  const errors = document.getElementById("whatif-errors");
  const figures = Array.from(form.querySelectorAll("dd[data-path]"));
  // Ask only for what the panel shows (the verdict and each figure's costs path): a few kB, not the whole costs.
  const fields = ["verdict", ...figures.map((dd) => dd.dataset.path)].join(",");
  const url = form.dataset.apiUrl + "?fields=" + encodeURIComponent(fields);
  const planned = { choice: choice.textContent, sentence: sentence.textContent };

  // Money as the engine's usd_text writes it everywhere else on the page: three significant figures with a
  // k/M/B/T suffix ($172M, $4.18), so the what-if never shows "$171.57M" beside the summary's "$172M".
  function money(text) {
    const x = Number(text);
    if (text === "" || text === null || text === undefined || !isFinite(x)) return "–";
    const sign = x < 0 ? "-" : "";
    const magnitude = Math.abs(x);
    let rounded = Number(magnitude.toPrecision(3));
    let suffix = "";
    for (const [threshold, name] of [[1e12, "T"], [1e9, "B"], [1e6, "M"], [1e3, "k"]]) {
      if (rounded >= threshold) {
        rounded = Number((magnitude / threshold).toPrecision(3));
        suffix = name;
        break;
      }
    }
    if (rounded === 0) return "$0";
    const places = Math.max(3 - (Math.floor(Math.log10(rounded)) + 1), 0);
    const digits = { minimumFractionDigits: places, maximumFractionDigits: places };
    return sign + "$" + rounded.toLocaleString("en-US", digits) + suffix;
  }
  function pick(obj, path) {
    return path.split(".").reduce((o, k) => (o && o[k] !== undefined ? o[k] : null), obj);
  }
  function showFigures(costs) {
    figures.forEach((dd) => {
      const value = costs ? pick(costs, dd.dataset.path) : dd.dataset.value;
      dd.textContent = money(value);
    });
  }
  function body() {
    const out = {};
    numbers.forEach((input) => {
      if (input.dataset.resizes || input.value.trim() === "" || input.value === input.dataset.default) return;
      const shown = Number(input.value);
      const value = isFinite(shown) ? shown / Number(input.dataset.scale || 1) : input.value;
      const parts = input.name.split(".");
      let target = out;
      parts.slice(0, -1).forEach((key) => (target = target[key] = target[key] || {}));
      target[parts[parts.length - 1]] = parts[parts.length - 1] === "years" ? Math.round(value) : value;
    });
    return out;
  }
  let sent = 0;
  async function recompute() {
    const mine = ++sent;
    const data = body();
    if (Object.keys(data).length === 0) {
      choice.textContent = planned.choice;
      sentence.textContent = planned.sentence;
      state.textContent = "(as planned)";
      errors.hidden = true;
      showFigures(null);
      return;
    }
    state.textContent = "(recomputing…)";
    try {
      const response = await fetch(url, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrf },
        body: JSON.stringify(data),
      });
      const json = await response.json();
      if (mine !== sent) return; // a newer request is on its way
      if (!response.ok) {
        const lines = Object.entries(json.errors || {}).flatMap(([path, msgs]) => msgs.map((m) => (m.startsWith(path) ? m : path + ": " + m)));
        errors.textContent = lines.length ? lines.join(" ") : json.detail;
        errors.hidden = false;
        state.textContent = "(not recomputed)";
        return;
      }
      errors.hidden = true;
      const verdict = json.verdict;
      choice.textContent = verdict ? verdict.choice : "none";
      sentence.textContent = verdict ? verdict.sentence : "No option is obtainable with these values.";
      state.textContent = "(what-if)";
      showFigures(json.costs);
    } catch (e) {
      state.textContent = "(could not reach the server)";
    }
  }
  let timer = null;
  function soon() {
    window.clearTimeout(timer);
    timer = window.setTimeout(recompute, 150);
  }
  form.querySelectorAll("input[type=range]").forEach((range) => {
    const box = document.getElementById(range.dataset.for);
    range.addEventListener("input", () => {
      box.value = range.value;
      soon();
    });
    box.addEventListener("input", () => {
      range.value = box.value;
    });
  });
  numbers.forEach((input) => input.addEventListener("input", soon));
  document.getElementById("whatif-reset").addEventListener("click", () => {
    numbers.forEach((input) => {
      input.value = input.dataset.default;
      const range = form.querySelector("input[type=range][data-for='" + input.id + "']");
      if (range) range.value = input.dataset.default;
    });
    recompute();
  });
  showFigures(null);
})();
