// Person pickers that search as you type: each <select data-person-picker> of the editor gets a
// combobox (a text box with a list of the people whose name contains what is typed). The select
// stays in the form, hidden, and holds the value that is posted; without this script the plain
// select in <noscript> beside it is the field. Keyboard: type to filter, Down/Up to move, Enter
// to pick, Escape to close.
// The editor writes its people once (template[data-people]): a picker's select holds only the
// person chosen until another is picked, when it takes a copy of the list.
(function () {
  "use strict";

  let serial = 0;

  // The people a picker offers, "— no one —" first, as <option>s: the editor's list, or the
  // select's own options outside an editor.
  function peopleOf(select) {
    const editor = select.closest(".editor");
    const list = editor && editor.querySelector("template[data-people]");
    return Array.from(list ? list.content.children : select.options);
  }

  function choose(select, value) {
    if (!Array.from(select.options).some((option) => option.value === value)) {
      select.replaceChildren(...peopleOf(select).map((option) => document.importNode(option, true)));
    }
    select.value = value;
  }

  function labelOf(select) {
    const option = select.selectedOptions[0];
    return option && option.value ? option.text.trim() : "";
  }

  function fieldName(select) {
    const label = select.closest("label");
    const text = label ? label.firstChild && label.firstChild.textContent : "";
    return (text || "Person").trim();
  }

  function enhance(select) {
    if (select.dataset.combo) return;
    serial += 1;
    const id = "person-combo-" + serial;
    const box = document.createElement("span");
    box.className = "combo";
    const input = document.createElement("input");
    input.type = "text";
    input.autocomplete = "off";
    input.spellcheck = false;
    input.placeholder = "— type a name —";
    input.value = labelOf(select);
    input.setAttribute("role", "combobox");
    input.setAttribute("aria-autocomplete", "list");
    input.setAttribute("aria-expanded", "false");
    input.setAttribute("aria-controls", id);
    // Inside the field's <label> the box takes its name from it (it comes first).
    if (!select.closest("label")) input.setAttribute("aria-label", fieldName(select));
    input.dataset.personCombo = "";
    if (select.getAttribute("aria-invalid")) input.setAttribute("aria-invalid", "true");
    // The visible box is what the browser checks before a submit; the hidden select is not.
    input.required = select.required;
    select.required = false;
    const list = document.createElement("ul");
    list.id = id;
    list.className = "combo-list";
    list.setAttribute("role", "listbox");
    list.setAttribute("aria-label", fieldName(select));
    list.hidden = true;
    select.hidden = true;
    select.disabled = false; // not sent until this script took it up (see editor_options)
    select.dataset.combo = id;
    select.before(box);
    box.append(input, list);
    box.append(select);
  }

  function parts(input) {
    const box = input.closest(".combo");
    return { box, list: box.querySelector(".combo-list"), select: box.querySelector("select") };
  }

  function open(input) {
    const { list, select } = parts(input);
    const query = input.value.trim().toLowerCase();
    const current = labelOf(select).toLowerCase();
    // Showing the current name lists everyone: the user opened it to change the person.
    const filter = query && query !== current ? query : "";
    list.replaceChildren();
    peopleOf(select).forEach((option, index) => {
      const text = option.value ? option.text.trim() : "— no one —";
      if (filter && !text.toLowerCase().includes(filter)) return;
      const item = document.createElement("li");
      item.id = list.id + "-" + index;
      item.setAttribute("role", "option");
      item.setAttribute("aria-selected", String(Boolean(option.value) && option.value === select.value));
      item.dataset.value = option.value;
      item.textContent = text;
      list.appendChild(item);
    });
    if (!list.children.length) {
      const none = document.createElement("li");
      none.className = "muted";
      none.setAttribute("role", "option");
      none.setAttribute("aria-disabled", "true");
      none.id = list.id + "-none";
      none.textContent = "Nobody matches";
      list.appendChild(none);
    }
    list.hidden = false;
    input.setAttribute("aria-expanded", "true");
    const first = list.querySelector("[aria-selected=true]") ||
      (filter ? list.querySelector("li[data-value]:not([data-value=''])") : null);
    setActive(input, first);
  }

  function close(input) {
    const { list } = parts(input);
    list.hidden = true;
    list.replaceChildren();
    input.setAttribute("aria-expanded", "false");
    input.removeAttribute("aria-activedescendant");
  }

  function active(input) {
    const id = input.getAttribute("aria-activedescendant");
    return id ? document.getElementById(id) : null;
  }

  function setActive(input, item) {
    const { list } = parts(input);
    list.querySelectorAll(".active").forEach((li) => li.classList.remove("active"));
    if (!item || item.dataset.value === undefined) {
      input.removeAttribute("aria-activedescendant");
      return;
    }
    item.classList.add("active");
    input.setAttribute("aria-activedescendant", item.id);
    item.scrollIntoView({ block: "nearest" });
  }

  function move(input, step) {
    const { list } = parts(input);
    if (list.hidden) open(input);
    const items = Array.from(list.querySelectorAll("li[data-value]"));
    if (!items.length) return;
    const index = items.indexOf(active(input));
    const next = index < 0 ? (step > 0 ? 0 : items.length - 1) : index + step;
    setActive(input, items[Math.max(0, Math.min(items.length - 1, next))]);
  }

  function pick(input, item) {
    const { select } = parts(input);
    const changed = select.value !== item.dataset.value;
    choose(select, item.dataset.value);
    input.value = labelOf(select);
    close(input);
    // The change bubbles from the select to the editor form, which saves it like any edit.
    if (changed) select.dispatchEvent(new Event("change", { bubbles: true }));
  }

  // Leaving the box: the person whose name is typed (or the one person it matches) is picked,
  // an emptied box picks no one, anything else goes back to the person already chosen.
  function settle(input) {
    const { select } = parts(input);
    const typed = input.value.trim().toLowerCase();
    const people = peopleOf(select).filter((option) => option.value);
    const named = (option) => option.text.trim().toLowerCase();
    const exact = people.filter((option) => named(option) === typed);
    const matching = people.filter((option) => named(option).includes(typed));
    const found = exact.length ? exact[0] : matching.length === 1 ? matching[0] : null;
    if (found || !typed) pick(input, { dataset: { value: found ? found.value : "" } });
    else input.value = labelOf(select);
    close(input);
  }

  // "for whom" beside "+ Event": Enter on a person adds the event (a deliberate second key
  // after "+", which only brought the cursor here).
  function addOnEnter(input) {
    const { select } = parts(input);
    if (select.name !== "events-new-person" || !select.value) return;
    const button = select.closest(".ed-add").querySelector('button[value="add:events"]');
    if (button) button.click();
  }

  function isCombo(target) {
    return target.matches && target.matches("input[data-person-combo]");
  }

  // The typing is not the coding: its events stop here (capture phase) before the editor form
  // would autosave on them; only a pick changes the select, which the form hears.
  document.addEventListener("input", (event) => {
    if (!isCombo(event.target)) return;
    event.stopPropagation();
    open(event.target);
  }, true);
  document.addEventListener("change", (event) => {
    if (isCombo(event.target)) event.stopPropagation();
  }, true);
  document.addEventListener("keydown", (event) => {
    const input = event.target;
    if (!isCombo(input)) return;
    const { list } = parts(input);
    const keys = {
      ArrowDown: () => (event.altKey ? open(input) : move(input, 1)),
      ArrowUp: () => move(input, -1),
      Enter: () => {
        const item = active(input);
        if (item && !list.hidden) pick(input, item);
        else settle(input);
        addOnEnter(input);
      },
      Escape: () => {
        if (list.hidden) return false;
        input.value = labelOf(parts(input).select);
        close(input);
        return true;
      },
    };
    const action = keys[event.key];
    if (!action) return;
    if (action() === false) return;
    event.preventDefault();
    event.stopPropagation();
  }, true);
  document.addEventListener("mousedown", (event) => {
    const item = event.target.closest && event.target.closest(".combo-list li[data-value]");
    if (!item) return;
    event.preventDefault(); // keep the focus in the box
    pick(item.closest(".combo").querySelector("input[data-person-combo]"), item);
  });
  document.addEventListener("click", (event) => {
    if (isCombo(event.target) && parts(event.target).list.hidden) open(event.target);
  });
  document.addEventListener("focusout", (event) => {
    if (isCombo(event.target) && event.target.getAttribute("aria-expanded") === "true") {
      settle(event.target);
    }
  });

  function enhanceAll(root) {
    const scope = root && root.querySelectorAll ? root : document;
    // An editor htmx swapped in was read with its <noscript> lists as elements: they go before
    // anything sends its form.
    scope.querySelectorAll(".editor noscript").forEach((fallback) => fallback.remove());
    scope.querySelectorAll("select[data-person-picker]").forEach(enhance);
  }
  document.addEventListener("htmx:load", (event) => enhanceAll(event.target));
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", () => enhanceAll(document));
  } else {
    enhanceAll(document);
  }
})();
