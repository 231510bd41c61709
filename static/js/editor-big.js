// Big statements in the editor: a filter box narrowing the people and events shown, and
// checkbox lists (with chips) for fields naming several people. Loaded beside audit.js.
(function () {
  "use strict";

  function rowText(row) {
    const parts = [];
    row.querySelectorAll("input[type=text]").forEach((input) => parts.push(input.value));
    row.querySelectorAll("select").forEach((select) => {
      Array.from(select.selectedOptions).forEach((option) => parts.push(option.text));
    });
    row.querySelectorAll(".chips .chip").forEach((chip) => parts.push(chip.textContent));
    return parts.join(" ").toLowerCase();
  }

  function filterEditor(box) {
    const editor = box.closest(".editor");
    const query = box.value.trim().toLowerCase();
    if (query) editor.querySelectorAll("details.ed-fold").forEach((fold) => { fold.open = true; });
    editor.querySelectorAll(".ed-row.ed-person, .ed-row.ed-event").forEach((row) => {
      // With the AI item beside it, the row and its AI item hide together.
      const pair = row.closest(".ed-pair.aligned") || row;
      pair.hidden = Boolean(query) && !rowText(row).includes(query);
    });
  }

  function filterChecklist(box) {
    const query = box.value.trim().toLowerCase();
    box.closest(".checklist").querySelectorAll("label.opt").forEach((option) => {
      option.hidden = Boolean(query) && !option.textContent.toLowerCase().includes(query);
    });
  }

  function redrawChips(multi) {
    const chips = multi.querySelector(".chips");
    chips.replaceChildren();
    multi.querySelectorAll("label.opt input:checked").forEach((box) => {
      const chip = document.createElement("span");
      chip.className = "chip";
      chip.textContent = box.parentElement.textContent.trim();
      chips.appendChild(chip);
    });
  }

  // The search boxes are not part of the coding: their events stop here (capture phase), before
  // the editor form would autosave on them, and Enter does not submit the form.
  function isLocal(target) {
    return target.matches && target.matches("[data-multi-search], [data-editor-filter]");
  }
  document.addEventListener("input", (event) => {
    if (!isLocal(event.target)) return;
    event.stopPropagation();
    if (event.target.matches("[data-editor-filter]")) filterEditor(event.target);
    else filterChecklist(event.target);
  }, true);
  document.addEventListener("change", (event) => {
    if (isLocal(event.target)) { event.stopPropagation(); return; }
    const multi = event.target.closest && event.target.closest("details.multi");
    if (multi) redrawChips(multi);
  }, true);
  document.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && isLocal(event.target)) event.preventDefault();
  }, true);
})();
