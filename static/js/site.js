// Every page. On a phone the site's tables scroll sideways (site.css); a table that scrolls and
// holds nothing focusable gets a tab stop and a name, so the keyboard alone can scroll it.
(function () {
  "use strict";
  const FOCUSABLE = "a[href], button, input, select, textarea, [tabindex]";

  // The heading just above the table (or above the box it scrolls in), if any.
  function headingOf(table) {
    for (let node = table; node && node.tagName !== "MAIN"; node = node.parentElement) {
      for (let before = node.previousElementSibling; before; before = before.previousElementSibling) {
        if (/^H[1-3]$/.test(before.tagName)) return before.textContent.trim() + ": ";
      }
    }
    return "";
  }

  function reachable(root) {
    const tables = Array.from((root || document).querySelectorAll("main table"))
      .filter((table) => !table.querySelector(FOCUSABLE) && !table.hasAttribute("tabindex"));
    // Every width is read before any table is marked: a mark between two reads would have the
    // browser lay the page out again for the next.
    const scrolling = tables.filter((table) => table.scrollWidth > table.clientWidth);
    scrolling.forEach(function (table) {
      table.setAttribute("tabindex", "0");
      table.setAttribute("aria-label", headingOf(table) + "table, scroll sideways with the arrow keys");
    });
  }

  document.addEventListener("DOMContentLoaded", function () { reachable(); });
  document.addEventListener("htmx:afterSettle", function (event) { reachable(event.target); });
  window.addEventListener("resize", function () { reachable(); });
})();
