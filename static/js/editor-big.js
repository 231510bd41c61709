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

  // A person matches when one of the words of their name starts with what is typed ("M" is
  // Mary, not John Smith).
  function nameMatches(text, query) {
    const words = text.toLowerCase().trim();
    return words.startsWith(query) || words.split(/\s+/).some((word) => word.startsWith(query));
  }

  // A checklist holds the people ticked until it is opened; then everyone, in the editor's
  // order, from its list of people (template[data-people]), the ticked boxes kept as they are.
  function listEveryone(multi) {
    const checklist = multi && multi.querySelector(".checklist");
    const editor = multi && multi.closest(".editor");
    const people = editor && editor.querySelector("template[data-people]");
    if (!checklist || !people || checklist.dataset.everyone) return;
    checklist.dataset.everyone = "1";
    const boxes = new Map();
    checklist.querySelectorAll("label.opt").forEach((label) => boxes.set(label.querySelector("input").value, label));
    Array.from(people.content.children).filter((option) => option.value).forEach(function (option) {
      let label = boxes.get(option.value);
      if (!label) {
        label = document.createElement("label");
        label.className = "opt";
        const box = document.createElement("input");
        box.type = "checkbox";
        box.name = multi.dataset.multi;
        box.value = option.value;
        label.append(box, " " + option.text);
      }
      checklist.appendChild(label);
    });
  }

  document.addEventListener("toggle", function (event) {
    const multi = event.target;
    if (multi.open && multi.matches && multi.matches("details.multi")) listEveryone(multi);
  }, true);

  function filterChecklist(box) {
    const query = box.value.trim().toLowerCase();
    listEveryone(box.closest("details.multi"));
    box.closest(".checklist").querySelectorAll("label.opt").forEach((option) => {
      option.hidden = Boolean(query) && !nameMatches(option.textContent, query);
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
  // In a checklist's search box: Enter ticks the first person shown that is not ticked yet
  // (it never unticks: Space on a ticked box does that, visibly), and empties the box for the
  // next name; Escape closes the list, back on its summary.
  function tickFirst(box) {
    listEveryone(box.closest("details.multi"));
    const checklist = box.closest(".checklist");
    const shown = Array.from(checklist.querySelectorAll("label.opt:not([hidden]) input[type=checkbox]"));
    const next = shown.find((input) => !input.checked);
    if (!next) return;
    next.checked = true;
    next.dispatchEvent(new Event("change", { bubbles: true }));
    box.value = "";
    filterChecklist(box);
  }

  // Enter in the editor's filter box: the cursor goes to the field that shows what was typed
  // (a name, a date, a description), its text selected to be typed over; the filter clears.
  function jumpTo(box) {
    const query = box.value.trim().toLowerCase();
    const editor = box.closest(".editor");
    const rows = Array.from(editor.querySelectorAll(".ed-row.ed-person, .ed-row.ed-event"))
      .filter((row) => !(row.closest(".ed-pair.aligned") || row).hidden);
    if (!query || !rows.length) return;
    const fields = rows.flatMap((row) => Array.from(row.querySelectorAll("input[type=text]:not([data-person-combo])")));
    const field = fields.find((input) => input.value.toLowerCase().includes(query)) ||
      rows[0].querySelector("input[type=text], select");
    box.value = "";
    filterEditor(box);
    if (!field) return;
    field.focus();
    if (field.select) field.select();
  }

  document.addEventListener("keydown", (event) => {
    if (!isLocal(event.target)) return;
    if (event.key === "Enter") {
      event.preventDefault();
      if (event.target.matches("[data-editor-filter]")) jumpTo(event.target);
      if (event.target.matches("[data-multi-search]") && event.target.value.trim()) tickFirst(event.target);
    } else if (event.key === "Escape" && event.target.matches("[data-multi-search]")) {
      const multi = event.target.closest("details.multi");
      event.preventDefault();
      event.stopPropagation();
      multi.open = false;
      multi.querySelector("summary").focus();
    }
  }, true);
})();
