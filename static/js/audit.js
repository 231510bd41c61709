// Keyboard-first auditing and the editor's save state. Small on purpose: htmx does the requests.
//   j / k  next / previous statement      e  edit (or start coding)
//   s      submit                         a  approve (admins)      ?  help
//   n      submit and next (queue: code my next; review: next in queue)   x  skip (asks why)
//   g      show or hide the coding guidelines beside the editor
//   1 2 3 0 on an event's S / A / F select: up / down / same / none; on R: the 1st..9th code;
//           on its R targets: tick the n-th person
//   1 .. 9  in the editor, the cursor in no field: a new event for the n-th person (at its date)
//   Enter   in an event's date, description or location: on to its S code
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

  function isTyping(target) {
    return target.closest && target.closest("input, textarea, select, [contenteditable]");
  }

  function toggleHelp() {
    const dialog = document.getElementById("shortcuts");
    if (!dialog) return;
    if (dialog.open) dialog.close();
    else dialog.showModal();
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

  // On an event's "R targets" (its summary focused), digit n ticks or unticks the n-th person.
  function targetKey(event) {
    const summary = event.target;
    const multi = summary.matches && summary.matches("details.multi > summary") ? summary.parentElement : null;
    if (!multi || !multi.closest(".ed-event") || !/^[1-9]$/.test(event.key)) return false;
    const box = multi.querySelectorAll("label.opt input[type=checkbox]")[Number(event.key) - 1];
    if (!box) return false;
    box.checked = !box.checked;
    box.dispatchEvent(new Event("change", { bubbles: true }));
    return true;
  }

  function sarfKey(event) {
    if (targetKey(event)) return true;
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
    // After F the cursor goes on to the relationship targets (digits tick people there).
    const next = all[all.indexOf(select) + 1] ||
      (row ? row.querySelector("details.multi > summary") : null);
    if (next) next.focus();
    return true;
  }

  // In an open editor, outside the fields, digit n adds an event for the n-th person: the
  // picker beside "+ Event" is set and the button pressed (focusAfterSwap puts the cursor at
  // the new event's date).
  function newEventKey(event) {
    if (!/^[1-9]$/.test(event.key) || isTyping(event.target)) return false;
    const scope = current() || document;
    const button = scope.querySelector('.editor-form button[value="add:events"]');
    const picker = button && button.closest(".ed-add").querySelector('select[name="events-new-person"]');
    const person = picker && Array.from(picker.options).filter((o) => o.value !== "")[Number(event.key) - 1];
    if (!person) return false;
    picker.value = person.value;
    picker.dispatchEvent(new Event("change", { bubbles: true }));
    button.click();
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

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (sarfKey(event) || enterKey(event) || newEventKey(event)) {
      event.preventDefault();
      return;
    }
    if (isTyping(event.target)) {
      if (event.key === "Escape") event.target.blur();
      return;
    }
    const actions = { j: () => move(1), k: () => move(-1), "?": toggleHelp,
      e: () => press("edit"), s: () => press("submit"), a: () => press("approve"),
      n: () => pressFirst(["submit-next", "code-next", "next-review"]), x: () => press("skip"),
      g: toggleGuide };
    const action = actions[event.key];
    if (action && action() !== false) event.preventDefault();
  });

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

  // Opening the editor, or adding an item, puts the cursor where typing starts.
  function focusAfterSwap(event) {
    const config = event.detail.requestConfig || {};
    const trigger = config.elt;
    const card = event.detail.elt && event.detail.elt.closest ? event.detail.elt.closest(CARD) : null;
    if (!trigger || !card || !card.classList.contains("editing")) return;
    if (trigger.value && trigger.value.indexOf("add:") === 0) {
      const rowClass = { people: "person", events: "event", pair_bonds: "bond" }[trigger.value.slice(4)];
      const rows = rowClass ? card.querySelectorAll(".ed-" + rowClass) : [];
      const last = rows[rows.length - 1];
      let field = last && last.querySelector("input[type=text], select");
      // A new event is a shift of the person chosen beside "+ Event": start at its date.
      const who = last && last.querySelector('select[name$="-person"]');
      if (rowClass === "event" && who && who.value) field = last.querySelector('input[name$="-dateTime"]');
      if (field) field.focus();
      return;
    }
    if (trigger.matches("[data-key=edit]") || trigger.querySelector("[data-key=edit]")) {
      const first = card.querySelector(".editor-form input[type=text], .editor-form select");
      if (first) first.focus();
    }
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
