// Shows only the target fields of the chosen workload.
(function () {
  const select = document.getElementById("id_workload");
  if (!select) return;
  function sync() {
    document.querySelectorAll("fieldset[data-workload]").forEach((fs) => {
      fs.hidden = fs.dataset.workload !== select.value;
    });
  }
  select.addEventListener("change", sync);
  sync();
})();
