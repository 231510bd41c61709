// Adjudication keys: j / k move between disputed items, 1..9 take that coder's version of the
// focused item, e opens its edit box. (s submits and ? shows the help, as everywhere: audit.js.)
(function () {
  "use strict";

  const ITEM = "[data-adj-item]";
  let currentKey = null;

  function items() {
    return Array.from(document.querySelectorAll(ITEM));
  }

  function current() {
    return currentKey ? document.getElementById(currentKey) : null;
  }

  function focusItem(item) {
    if (!item) return;
    items().forEach((el) => el.classList.remove("is-current"));
    currentKey = item.id;
    item.classList.add("is-current");
    item.focus({ preventScroll: true });
    item.scrollIntoView({ block: "nearest", behavior: "smooth" });
  }

  function move(step) {
    const all = items();
    if (!all.length) return;
    const index = all.findIndex((el) => el.id === currentKey);
    const next = index < 0 ? (step > 0 ? 0 : all.length - 1) : index + step;
    focusItem(all[Math.max(0, Math.min(all.length - 1, next))]);
  }

  function isTyping(target) {
    return target.closest && target.closest("input, textarea, select, [contenteditable]");
  }

  document.addEventListener("keydown", function (event) {
    if (!document.querySelector("[data-adjudication]")) return;
    if (event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target)) return;
    if (event.key === "j" || event.key === "k") {
      move(event.key === "j" ? 1 : -1);
      event.stopImmediatePropagation();
      event.preventDefault();
      return;
    }
    const item = current() || items()[0];
    if (!item) return;
    if (/^[1-9]$/.test(event.key)) {
      const button = item.querySelector('[data-choose="' + event.key + '"]');
      if (button) {
        currentKey = item.id;
        button.click();
        event.preventDefault();
      }
    } else if (event.key === "e") {
      const box = item.querySelector("[data-adj-edit]");
      if (box) {
        box.open = true;
        box.querySelector("textarea").focus();
        event.stopImmediatePropagation();
        event.preventDefault();
      }
    }
  }, true);

  document.addEventListener("click", function (event) {
    const item = event.target.closest && event.target.closest(ITEM);
    if (item) {
      currentKey = item.id;
      items().forEach((el) => el.classList.toggle("is-current", el === item));
    }
  });

  // After a choice the screen is swapped: go on to the next item still to decide (or stay).
  document.addEventListener("htmx:afterSwap", function () {
    if (!document.querySelector("[data-adjudication]")) return;
    const all = items();
    const index = all.findIndex((el) => el.id === currentKey);
    const after = all.slice(index + 1).concat(all.slice(0, index + 1));
    const open = after.find((el) => !el.classList.contains("is-decided"));
    focusItem(open || document.getElementById(currentKey) || all[0]);
  });

  document.addEventListener("DOMContentLoaded", function () {
    const first = items().find((el) => !el.classList.contains("is-decided"));
    if (first) focusItem(first);
  });
})();
