// Polls the run's status while it is queued or running, moves the progress bar, and reloads
// the page once the run has finished so the result renders server-side.
(function () {
  const box = document.getElementById("run");
  if (!box) return;
  const url = box.dataset.statusUrl;
  const done = (s) => s === "succeeded" || s === "infeasible" || s === "failed";
  if (done(box.dataset.status)) return;
  const bar = document.getElementById("run-progress");
  const status = document.getElementById("run-status");
  const stage = document.getElementById("run-stage");
  const percent = document.getElementById("run-percent");
  const error = document.getElementById("run-error");
  const stages = Array.from(document.querySelectorAll(".stages li"));
  function markStages(current, finished) {
    const index = stages.findIndex((li) => li.dataset.stage === current);
    stages.forEach((li, i) => {
      li.classList.toggle("done", finished || (index >= 0 && i < index));
      li.classList.toggle("current", !finished && i === index);
    });
  }
  // Poll schedule (benchmarks/latency.py reads this line): first poll after firstMs, each wait growth times the
  // last, up to maxMs. A plan usually finishes within a second of its submission, so the first polls come fast
  // (0.1, 0.2, 0.4, 0.6, 0.8, 1.1 s...: the end is noticed within a fifth of its time) and then thin out, so a
  // long run costs one small request every 2 s.
  const POLL = {firstMs: 100, growth: 1.25, maxMs: 2000};
  let delay = POLL.firstMs;
  async function poll() {
    try {
      const response = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
      const json = (response.headers.get("Content-Type") || "").includes("application/json");
      if (!response.ok || !json) {
        // Deleted plan (404) or an expired session (redirect to the login page): stop and say so.
        error.textContent = "Lost track of this run (reload the page, or log in again).";
        error.hidden = false;
        return;
      }
      const run = await response.json();
      bar.value = run.progress_percent;
      percent.textContent = run.progress_percent + " %";
      stage.textContent = run.stage;
      markStages(run.stage, run.finished);
      status.textContent = run.status;
      status.className = "status status-" + run.status;
      if (run.error) { error.textContent = run.error; error.hidden = false; }
      if (run.finished) { window.location.reload(); return; }
    } catch (e) { /* network blip: keep polling */ }
    delay = Math.min(delay * POLL.growth, POLL.maxMs);
    window.setTimeout(poll, delay);
  }
  window.setTimeout(poll, delay);
})();

// Ask before destructive actions (forms with data-confirm).
document.querySelectorAll("form[data-confirm]").forEach(function (form) {
  form.addEventListener("submit", function (event) {
    if (!window.confirm(form.dataset.confirm)) event.preventDefault();
  });
});
