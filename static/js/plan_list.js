// "Compare selected": turn the ticked rows into ?ids=1,2,3 (the compare URL the API docs name).
(function () {
  const form = document.getElementById("compare-form");
  if (!form) return;
  form.addEventListener("submit", function (event) {
    const ids = Array.from(form.querySelectorAll("input[name=pick]:checked")).map((box) => box.value);
    if (ids.length < 2) {
      event.preventDefault();
      window.alert("Tick two or more plans to compare.");
      return;
    }
    document.getElementById("compare-ids").value = ids.join(",");
    form.querySelectorAll("input[name=pick]").forEach((box) => (box.disabled = true));
  });
})();
