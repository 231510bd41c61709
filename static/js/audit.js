// Keyboard-first auditing and the editor's save state. Small on purpose: htmx does the requests.
//   j / k  next / previous statement      e  edit (or start coding)
//   s      submit (asks to confirm)       a  approve (admins)      ?  help
//   n      submit and next (asks to confirm; queue: code my next; review: next in queue)
//   x      skip (asks why)                g  show or hide the coding guidelines
//   +      in the editor: a new event (the cursor goes to "for whom"; Enter adds it)
//   /      in the editor: find (type a name, a date, a word; Enter goes to that field)
//   1 2 3 0 on an event's S / A / F select: up / down / same / none; on R: the 1st..9th code
//   Enter   in an event's date, description or location: on to its S code
// Single keys act only when the focus is on the page or on a button or link: never in a
// field, a picker, an open form, a checklist or a dialog (see shortcutsBlocked).
(function () {
  "use strict";

  const CARD = "article.stmt.subject";
  let currentId = null;

  function current() {
    return currentId ? document.getElementById(currentId) : null;
  }

  function setCurrent(card, scroll) {
    if (!card) return;
    document.querySelectorAll(".stmt.is-current").forEach((el) => el.classList.remove("is-current"));
    currentId = card.id;
    card.classList.add("is-current");
    if (scroll) {
      card.scrollIntoView({ block: "start", behavior: "smooth" });
      card.focus({ preventScroll: true });
      history.replaceState(history.state, "", "#" + card.id);
    }
  }

  function move(step) {
    const cards = Array.from(document.querySelectorAll(CARD));
    if (!cards.length) return;
    const index = cards.findIndex((card) => card.id === currentId);
    const next = index < 0 ? (step > 0 ? 0 : cards.length - 1) : index + step;
    // Past the last card of the window: load the next window, then move on into it.
    const more = document.getElementById("load-more");
    if (next >= cards.length && more && window.htmx) {
      pendingStep = true;
      htmx.trigger(more, "load-more");
      return;
    }
    setCurrent(cards[Math.max(0, Math.min(cards.length - 1, next))], true);
  }
  let pendingStep = false;

  // A shortcut clicks the matching [data-key] control of the current statement (or the page).
  function press(key) {
    const scope = current() || document;
    const control = scope.querySelector('[data-key="' + key + '"]') ||
      (scope === document ? null : document.querySelector('.review [data-key="' + key + '"]'));
    if (!control) return false;
    control.click();
    return true;
  }

  const EDITABLE = "input, textarea, select, [contenteditable], [role=combobox], [role=listbox]";
  // Open things that hold a form or a list: typing there is typing, never a command.
  const OPEN_POPUP = "dialog[open], details[open].skip, details[open].multi, details[open].json-editor";

  function isTyping(target) {
    return target.closest && target.closest(EDITABLE);
  }

  function shortcutsBlocked(target) {
    if (isTyping(target)) return true;
    if (target.closest && target.closest(OPEN_POPUP)) return true;
    // A modal dialog open anywhere (the submit confirm, the help) takes every key.
    return Boolean(document.querySelector("dialog[open]"));
  }

  function toggleHelp() {
    const dialog = document.getElementById("shortcuts");
    if (!dialog) return;
    if (dialog.open) {
      dialog.close();
      return;
    }
    dialog.showModal();
    // At its top, the main keys first: the heading takes the focus, not the Close button.
    dialog.scrollTop = 0;
    const top = dialog.querySelector("[data-dialog-top]");
    if (top) top.focus({ preventScroll: true });
  }

  function toggleGuide() {
    const panel = document.getElementById("guide-panel");
    if (!panel) return false;
    panel.hidden = !panel.hidden;
    document.body.classList.toggle("guide-open", !panel.hidden);
    document.querySelectorAll("[data-guide-toggle]").forEach((b) => b.setAttribute("aria-expanded", String(!panel.hidden)));
    return true;
  }

  // --- SARF codes by number -------------------------------------------------------------------
  // On an event's S, A, R or F select a digit sets the code and moves on to the next variable,
  // so "1 1 2" codes symptom up, anxiety up, then relationship conflict without a dropdown.
  const SARF = /-(symptom|anxiety|relationship|functioning)$/;

  function sarfKey(event) {
    const select = event.target;
    if (!select.matches || !select.matches("select") || !SARF.test(select.name || "")) return false;
    if (!/^[0-9]$/.test(event.key)) return false;
    const digit = Number(event.key);
    const options = Array.from(select.options).filter((o) => o.value !== "");
    const choice = digit === 0 ? "" : (options[digit - 1] || {}).value;
    if (choice === undefined) return false;
    select.value = choice;
    select.dispatchEvent(new Event("change", { bubbles: true }));
    const row = select.closest(".ed-event");
    const all = row ? Array.from(row.querySelectorAll("select")).filter((s) => SARF.test(s.name)) : [];
    // After F the cursor goes on to the relationship targets: type a name, Enter ticks them.
    const next = all[all.indexOf(select) + 1];
    if (next) next.focus();
    else if (row) openChecklist(row.querySelector("details.multi"));
    return true;
  }

  // A checklist of people (R targets, triangles) opened from the keyboard: the cursor goes to
  // its search box, where typing filters and Enter ticks the first person shown (editor-big.js).
  function openChecklist(multi) {
    if (!multi) return;
    multi.open = true;
    const search = multi.querySelector("[data-multi-search]");
    if (search) search.focus();
  }

  // "+" in the editor: the cursor goes to "for whom" beside "+ Event"; there Enter on a name
  // adds the event (person-picker.js), so no single key ever creates an item by itself.
  function newEventKey() {
    const scope = current() || document;
    const picker = scope.querySelector('.editor-form .ed-add select[name="events-new-person"]');
    const box = picker && picker.closest(".ed-add").querySelector("input[data-person-combo]");
    const fold = box && box.closest("details.ed-fold");
    if (fold) fold.open = true;
    if (!box) return false;
    box.focus();
    box.select();
    return true;
  }

  // "/" in the editor: the cursor goes to its filter box; Enter there jumps to the field that
  // shows what was typed (editor-big.js).
  function findKey() {
    const scope = current() || document;
    const box = scope.querySelector(".editor [data-editor-filter]");
    if (!box) return false;
    box.focus();
    return true;
  }

  // Enter in an event's text fields goes on to its codes instead of submitting the form.
  const EVENT_TEXT = /-(dateTime|description|location)$/;
  function enterKey(event) {
    const input = event.target;
    if (event.key !== "Enter" || !input.matches || !input.matches("input[type=text]")) return false;
    const row = input.closest(".ed-event");
    if (!row || !EVENT_TEXT.test(input.name || "")) return false;
    const symptom = row.querySelector('select[name$="-symptom"]');
    if (symptom) symptom.focus();
    return true;
  }

  function pressFirst(keys) {
    return keys.some((key) => press(key));
  }

  // x opens the skip form; whatever opens a form moves the cursor into it (see "toggle" below).
  function skipKey() {
    return press("skip");
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (sarfKey(event) || enterKey(event)) {
      event.preventDefault();
      return;
    }
    if (event.key === "Escape" && isTyping(event.target) && !event.target.closest("dialog[open]")) {
      event.target.blur();
      return;
    }
    const helpOnly = event.key === "?" && !isTyping(event.target) &&
      !document.querySelector("dialog[open]:not(#shortcuts)");
    if (shortcutsBlocked(event.target) && !helpOnly) return;
    const actions = { j: () => move(1), k: () => move(-1), "?": toggleHelp,
      e: () => press("edit"), s: () => press("submit"), a: () => press("approve"),
      n: () => pressFirst(["submit-next", "code-next", "next-review"]), x: skipKey,
      g: toggleGuide, "+": newEventKey, "/": findKey };
    const action = actions[event.key];
    if (action && action() !== false) event.preventDefault();
  });

  // --- submit asks first ----------------------------------------------------------------------
  // A submit button ([data-confirm]) opens its dialog instead: what will be submitted, in
  // plain words, and a second act (Enter on the focused button, or a click) to send it.
  // Capture phase: the click stops here, before htmx or the form would send anything.
  document.addEventListener("click", function (event) {
    const button = event.target.closest && event.target.closest("[data-confirm]");
    if (!button) return;
    const dialog = document.getElementById(button.dataset.confirm);
    if (!dialog) return;
    // A remove asks only when something points at the item; else the plain remove goes on.
    const refs = dialog.querySelector("[data-refs-count]");
    if (refs && refs.dataset.refsCount === "0") return;
    event.preventDefault();
    event.stopPropagation();
    openConfirm(dialog, button.dataset.confirmOp);
  }, true);

  function openConfirm(dialog, op) {
    dialog.querySelectorAll("[data-confirm-op]").forEach((b) => { b.hidden = b.dataset.confirmOp !== op; });
    if (!dialog.open) dialog.showModal();
    const go = dialog.querySelector('[data-confirm-op="' + op + '"]:not([hidden])');
    if (go) go.focus();
    // The summary is of the coding as saved: what was typed since is saved now, and the reply
    // updates it. Unchanged since the last save, the coding goes straight to its submit.
    const form = dialog.closest("form[data-autosave]");
    if (form && window.htmx && changedSinceSave(form)) htmx.trigger(form, "change");
  }

  // Edits of a coding form (its input and change events; the local search boxes and the
  // pickers' typing stop theirs before the form) against those its last successful save
  // carried. A form drawn by the server is its coding as saved.
  const edits = new WeakMap();
  const carried = new WeakMap(); // request -> edits it carried

  function editsOf(form) {
    if (!edits.has(form)) edits.set(form, { made: 0, saved: 0 });
    return edits.get(form);
  }

  function changedSinceSave(form) {
    const tally = editsOf(form);
    return tally.made !== tally.saved;
  }

  function codingForm(elt) {
    return elt && elt.closest ? elt.closest("form[data-autosave]") : null;
  }

  function noteEdit(event) {
    const form = codingForm(event.target);
    if (form) editsOf(form).made += 1;
  }
  document.addEventListener("input", noteEdit);
  document.addEventListener("change", noteEdit);

  document.addEventListener("htmx:beforeRequest", function (event) {
    const form = codingForm(event.detail.elt);
    if (form) carried.set(event.detail.xhr, editsOf(form).made);
  });

  document.addEventListener("htmx:afterRequest", function (event) {
    const form = codingForm(event.detail.elt);
    const xhr = event.detail.xhr;
    if (!form || !xhr || !carried.has(xhr) || xhr.status < 200 || xhr.status >= 300) return;
    const tally = editsOf(form);
    tally.saved = Math.max(tally.saved, carried.get(xhr));
  });

  // In a confirm, only Enter or a click sends: a Space typed by mistake on its focused button
  // does nothing.
  function noSpaceOnConfirm(event) {
    if (event.key === " " && event.target.closest && event.target.closest("dialog.confirm") &&
        event.target.matches("button[data-confirm-op]")) event.preventDefault();
  }
  document.addEventListener("keydown", noSpaceOnConfirm, true);
  document.addEventListener("keyup", noSpaceOnConfirm, true);

  document.addEventListener("click", function (event) {
    const cancel = event.target.closest && event.target.closest("[data-confirm-cancel]");
    if (cancel) cancel.closest("dialog").close();
  });

  // The confirmed submit has its answer: the confirm closes (a refusal then shows its list of
  // problems where the save status is, and the focus goes there).
  document.addEventListener("htmx:afterRequest", function (event) {
    const elt = event.detail.elt;
    const dialog = elt && elt.closest ? elt.closest("dialog.confirm[open]") : null;
    if (!dialog) return;
    // Answered with the next statement's address (submit and next), the page is already on
    // its way there: closing a modal dialog would restyle the whole page for nothing.
    const xhr = event.detail.xhr;
    if (xhr && xhr.getResponseHeader("HX-Redirect")) return;
    const form = dialog.closest("form[data-autosave]");
    dialog.close();
    const status = form && document.getElementById("save-status-" + form.dataset.feedback);
    if (status) {
      status.setAttribute("tabindex", "-1");
      status.focus();
    }
  });

  // Whatever opens a form or a list moves the cursor into it: the skip form, a checklist of
  // people, the raw JSON editor.
  // Only an opening the user asked for (a click or a key on its summary) moves the focus.
  let askedToOpen = null;
  document.addEventListener("click", function (event) {
    const summary = event.target.closest && event.target.closest("summary");
    askedToOpen = summary ? summary.parentElement : null;
  }, true);

  document.addEventListener("toggle", function (event) {
    const details = event.target;
    if (!details.open || !details.matches || details !== askedToOpen) return;
    askedToOpen = null;
    let field = null;
    if (details.matches("details.skip")) field = details.querySelector("select, textarea, input:not([type=hidden])");
    else if (details.matches("details.multi")) field = details.querySelector("[data-multi-search]");
    else if (details.matches("details.json-editor")) field = details.querySelector("textarea");
    const active = document.activeElement;
    const inside = active && details.contains(active) && !active.matches("summary");
    if (field && !inside) field.focus();
  }, true);

  document.addEventListener("click", function (event) {
    if (event.target.closest("[data-shortcuts]")) toggleHelp();
    if (event.target.closest("[data-guide-toggle]")) toggleGuide();
    const card = event.target.closest(CARD);
    if (card) setCurrent(card, false);
  });

  // --- saving state ---------------------------------------------------------------------------

  function statusFor(elt) {
    const form = elt && elt.closest && elt.closest("form[data-autosave]");
    return form ? document.getElementById("save-status-" + form.dataset.feedback) : null;
  }

  function showProblem(event, text) {
    const status = statusFor(event.detail.elt);
    if (!status) return;
    status.className = "status-error";
    status.setAttribute("role", "alert");
    status.textContent = text;
  }

  document.addEventListener("htmx:sendError", function (event) {
    showProblem(event, "Not saved: the server could not be reached. Your input is still here; " +
      "it is sent again with your next change, or press Save.");
  });

  document.addEventListener("htmx:responseError", function (event) {
    const code = event.detail.xhr ? event.detail.xhr.status : "?";
    showProblem(event, "Not saved: the server answered " + code + ". Your input is still here; press Save to retry.");
  });

  // After a conflict (409) autosave stops: each further save would only add another conflict.
  document.addEventListener("audit:conflict", function (event) {
    const form = document.getElementById("editor-form-" + event.detail.feedback);
    if (form) form.dataset.conflict = "1";
  });

  document.addEventListener("htmx:confirm", function (event) {
    const form = event.detail.elt.closest && event.detail.elt.closest("form[data-conflict]");
    if (form && event.detail.verb !== "get") event.preventDefault();
  });

  // Mark the inputs a 422 reply names, and clear the marks once a save goes through.
  function markInvalid() {
    document.querySelectorAll("form[data-autosave]").forEach(function (form) {
      const status = document.getElementById("save-status-" + form.dataset.feedback);
      if (!status || !(status.dataset.fields || status.classList.contains("ok"))) return;
      form.querySelectorAll("[aria-invalid]").forEach((el) => el.removeAttribute("aria-invalid"));
      (status.dataset.fields || "").split(" ").filter(Boolean).forEach(function (name) {
        form.querySelectorAll('[name="' + name + '"]').forEach((el) => el.setAttribute("aria-invalid", "true"));
      });
    });
  }

  // Opening the editor, adding or removing an item, puts the cursor where typing goes on.
  // The button's op is noted when its request leaves: the reply replaces the whole card, so
  // the focus is placed in the new card, found again by its id once the swap has settled.
  let focusPlan = null;

  document.addEventListener("htmx:configRequest", function (event) {
    const elt = event.detail.elt;
    // The form's own requests (autosave on change or typing, Enter in a field) are plain
    // saves, whatever button was pressed before: only a button's own request submits.
    if (elt && elt.matches && elt.matches("form[data-autosave]")) event.detail.parameters.op = "save";
    const card = elt && elt.closest ? elt.closest(CARD) : null;
    if (!card) return;
    const op = elt.value || "";
    if (/^(add|remove|remove_clear):/.test(op)) {
      const row = elt.closest(".ed-row");
      const rows = row ? Array.from(card.querySelectorAll(".ed-row." + row.classList[1])) : [];
      focusPlan = { elt: elt, card: card.id, op: op, index: rows.indexOf(row) };
    } else if (elt.matches("[data-key=edit]") || elt.querySelector("[data-key=edit]")) {
      focusPlan = { elt: elt, card: card.id, op: "edit" };
    }
  });

  const ROW_CLASS = { people: "person", events: "event", pair_bonds: "bond", delete: "delete" };

  function firstField(row) {
    return row && row.querySelector("input[type=text], select:not([hidden]), input[data-person-combo]");
  }

  function focusAfterSwap(event) {
    const plan = focusPlan;
    // Only the reply to the request that made the plan (an autosave's may settle first).
    const config = event.detail.requestConfig || {};
    if (!plan || config.elt !== plan.elt) return;
    const card = document.getElementById(plan.card);
    if (!card || !card.classList.contains("editing")) return;
    focusPlan = null;
    // The coder already went on elsewhere (typing faster than the reply): leave them there.
    const active = document.activeElement;
    if (active && active !== document.body && document.contains(active) && !active.closest("dialog")) return;
    const [verb, kind] = plan.op.split(":");
    if (plan.op === "edit") {
      const first = firstField(card.querySelector(".editor-form"));
      if (first) first.focus();
      return;
    }
    const rowClass = ROW_CLASS[kind];
    const rows = rowClass ? card.querySelectorAll(".ed-" + rowClass) : [];
    const fold = card.querySelector('details.ed-fold[data-kind="' + kind + '"]');
    if (fold) fold.open = true;
    let field = null;
    if (verb === "add") {
      const last = rows[rows.length - 1];
      field = firstField(last);
      // A new event is a shift of the person chosen beside "+ Event": start at its date.
      const who = last && last.querySelector('select[name$="-person"]');
      if (rowClass === "event" && who && who.value) field = last.querySelector('input[name$="-dateTime"]');
    } else {
      // Removed: on to the item that took its place, else the previous one, else "+ Add".
      const next = rows[Math.min(plan.index, rows.length - 1)];
      field = next ? next.querySelector("input[type=text], input[data-person-combo], select:not([hidden]), button") : null;
      if (!field) {
        const section = fold || card;
        field = section.querySelector('.ed-add button[value="add:' + kind + '"]');
      }
    }
    if (field) field.focus();
  }

  // Typing in the raw JSON editor survives a save of the form beside it. An autosave's reply
  // refreshes that textarea out of band: a textarea being typed in is left as it is. A reply
  // that replaces the whole card (adding an item) carries the typing over into the new card,
  // in the same task as the swap, so no click can fall between the two.
  function typedIn(area) {
    return area.value !== area.defaultValue;
  }

  document.addEventListener("htmx:oobBeforeSwap", function (event) {
    const target = event.detail.target;
    if (target.matches && target.matches(".json-editor textarea") && typedIn(target)) {
      event.detail.shouldSwap = false;
    }
  });

  let typedJson = [];
  document.addEventListener("htmx:beforeSwap", function (event) {
    typedJson = [];
    const trigger = event.detail.requestConfig && event.detail.requestConfig.elt;
    if (trigger && trigger.closest && trigger.closest(".json-editor")) return;
    document.querySelectorAll(".json-editor textarea").forEach(function (area) {
      if (area.id && typedIn(area)) typedJson.push([area.id, area.value]);
    });
  });

  document.addEventListener("htmx:afterSwap", function () {
    typedJson.forEach(function ([id, value]) {
      const area = document.getElementById(id);
      if (!area || typedIn(area)) return;
      area.value = value;
      area.closest("details").open = true;
    });
    typedJson = [];
  });

  document.addEventListener("htmx:afterSettle", function (event) {
    if (pendingStep) {
      pendingStep = false;
      move(1);
    }
    markInvalid();
    if (currentId && current()) current().classList.add("is-current");
    focusAfterSwap(event);
  });

  // "Family so far" shows the coding as saved: after each save or card swap, an open panel
  // of that statement is read again.
  function refreshState(statementId) {
    const panel = document.getElementById("state-" + statementId);
    if (!panel || !panel.dataset.stateUrl || !window.htmx) return;
    if (panel.closest("details") && !panel.closest("details").open) return;
    htmx.ajax("GET", panel.dataset.stateUrl, { target: panel, swap: "outerHTML" });
  }

  document.addEventListener("htmx:afterRequest", function (event) {
    const elt = event.detail.elt;
    if (!event.detail.successful || !elt || !elt.closest) return;
    // A save of the coding (its form or a button of it) or a whole card swapped.
    const target = event.detail.target;
    const swappedCard = target && target.matches && target.matches(CARD) ? target : null;
    const form = elt.closest("form[data-autosave]");
    const id = swappedCard ? swappedCard.dataset.stmt : form ? form.closest(CARD).dataset.stmt : null;
    if (id) refreshState(id);
  });

  // --- names follow renames at once -------------------------------------------------------------
  // Typing a person's name renames them in every picker and list of the editor at once (the
  // labels are the ones the server writes: a name, "(2nd)" where two people share it).
  const ORDINAL = / \(\d+(st|nd|rd|th)\)$/;

  function ordinal(n) {
    const tens = n % 100;
    const suffix = tens >= 10 && tens <= 20 ? "th" : ({ 1: "st", 2: "nd", 3: "rd" }[n % 10] || "th");
    return n + suffix;
  }

  function relabel(entries) {
    // entries: [{ident, base, set(text)}] in list order; repeated names get "(2nd)".
    const seen = {};
    entries.forEach(function (entry) {
      seen[entry.base] = (seen[entry.base] || 0) + 1;
      entry.set(seen[entry.base] === 1 ? entry.base : entry.base + " (" + ordinal(seen[entry.base]) + ")");
    });
  }

  // The editor's list of its people (template[data-people]) is renamed, then every picker,
  // picker box and checklist takes each person's label from it by id.
  function renamePerson(editor, ident, name) {
    const list = editor.querySelector("template[data-people]");
    if (!list) return;
    const people = Array.from(list.content.children).filter((o) => o.value !== "");
    relabel(people.map(function (option) {
      const base = option.value === ident ? name : option.text.replace(ORDINAL, "");
      return { base: base, set: (text) => { option.text = text; } };
    }));
    const labels = new Map(people.map((option) => [option.value, option.text]));
    editor.querySelectorAll("select[data-person-picker]").forEach(function (select) {
      Array.from(select.options).forEach(function (option) {
        if (labels.has(option.value)) option.text = labels.get(option.value);
      });
      const combo = select.closest(".combo");
      const box = combo && combo.querySelector("input[data-person-combo]");
      if (box && document.activeElement !== box && select.value) box.value = select.selectedOptions[0].text;
    });
    editor.querySelectorAll(".checklist label.opt").forEach(function (label) {
      const input = label.querySelector("input");
      if (labels.has(input.value)) label.lastChild.textContent = " " + labels.get(input.value);
    });
    editor.querySelectorAll("details.multi").forEach(function (multi) {
      multi.dispatchEvent(new Event("change", { bubbles: false }));
    });
  }

  document.addEventListener("input", function (event) {
    const input = event.target;
    if (!input.matches || !input.matches('.ed-person input[name$="-name"], .ed-person input[name$="-last_name"]')) return;
    const row = input.closest(".ed-person");
    const ident = row.querySelector('input[type=hidden][name$="-id"]');
    if (!ident) return;
    const parts = ["name", "last_name"].map((n) => (row.querySelector('input[name$="-' + n + '"]') || {}).value || "");
    const name = parts.map((p) => p.trim()).filter(Boolean).join(" ") || "a person without a name";
    renamePerson(input.closest(".editor"), ident.value, name);
  });

  // A link to a statement outside the window shown: open the window that holds it (?at=).
  function openWindowOf(hash) {
    const wanted = /^#stmt-(\d+)$/.exec(hash);
    if (!wanted || !document.getElementById("statements")) return;
    const url = new URL(location.href);
    if (url.searchParams.get("at") === wanted[1]) return;
    url.searchParams.delete("from");
    url.searchParams.set("at", wanted[1]);
    location.replace(url.toString());
  }

  window.addEventListener("hashchange", function () {
    const target = document.querySelector(location.hash);
    if (target && target.matches(CARD)) setCurrent(target, false);
    else if (!target) openWindowOf(location.hash);
  });

  document.addEventListener("DOMContentLoaded", function () {
    const target = location.hash && document.querySelector(location.hash);
    if (target && target.matches(CARD)) setCurrent(target, false);
    if (!target) openWindowOf(location.hash);
    markInvalid();
  });
})();
