// Shows only the target fields of the chosen workload (and hides the model for a capacity plan).
(function () {
  const select = document.getElementById("id_workload");
  if (!select) return;
  function sync() {
    document.querySelectorAll("fieldset[data-workload], p[data-workload]").forEach((el) => {
      el.hidden = el.dataset.workload !== select.value;
    });
    // A capacity plan has no model: its field hides (and the form leaves the model out of the request).
    document.querySelectorAll("[data-not-workload]").forEach((el) => {
      el.hidden = el.dataset.notWorkload === select.value;
    });
  }
  select.addEventListener("change", sync);
  sync();
})();
