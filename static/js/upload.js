// Upload page: when a run file is chosen, fill each "mode" select with the modes found in it
// (experiments[].results.mode or .provenance.mode), so the user picks from what is there.
(function () {
  "use strict";

  function modesOf(text) {
    let doc;
    try { doc = JSON.parse(text); } catch (e) { return []; }
    const experiments = doc && Array.isArray(doc.experiments) ? doc.experiments : [];
    const modes = [];
    for (const exp of experiments) {
      const mode = (exp && exp.results && exp.results.mode) || (exp && exp.provenance && exp.provenance.mode);
      if (typeof mode === "string" && !modes.includes(mode)) modes.push(mode);
    }
    return modes;
  }

  function fill(select, modes) {
    const current = select.value;
    select.replaceChildren(new Option(select.dataset.empty, ""));
    for (const mode of modes) select.add(new Option(mode, mode));
    select.value = modes.includes(current) ? current : "";
  }

  async function update(input) {
    const texts = await Promise.all(Array.from(input.files).map((file) => file.text()));
    const modes = [...new Set(texts.flatMap(modesOf))];
    if (!input.files.length) return; // nothing chosen: keep what the server offered
    document.querySelectorAll(`select[data-modes-from="${input.name}"]`).forEach((select) => fill(select, modes));
    const kept = document.querySelector(`[data-kept="${input.name}"]`);
    if (kept) kept.hidden = true; // a new file replaces the kept one
  }

  document.querySelectorAll("select[data-modes-from]").forEach((select) => {
    const input = document.querySelector(`input[type=file][name="${select.dataset.modesFrom}"]`);
    if (input && !input.dataset.modesBound) {
      input.dataset.modesBound = "1";
      input.addEventListener("change", () => update(input));
    }
  });
})();
