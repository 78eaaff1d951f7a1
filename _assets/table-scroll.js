// A table wider than its column (on a phone) scrolls sideways inside its own box, and says so.
// Touch browsers hide scroll bars, and a table's cells paint over the box's edge shadows, so a reader
// saw the last column cut and nothing saying there is more. Each such table gets a line above it
// ("Scroll sideways for the whole table") and, while there is more to its right, a fade at its right
// edge (class "table-more-right", course.css); its caption wraps to the box's width and stays in view.
// A table that is not already in a scroll box is put in one.
(function () {
  var CUE = "Scroll sideways for the whole table \u2192";
  function boxOf(table) {
    var box = table.closest(".pst-scrollable-table-container, .table-scroll");
    if (box) return box;
    box = document.createElement("div");
    box.className = "table-scroll";
    table.parentNode.insertBefore(box, table);
    box.appendChild(table);
    return box;
  }
  function cueOf(box) {
    var prev = box.previousElementSibling;
    return prev && prev.classList.contains("table-scroll-cue") ? prev : null;
  }
  function edge(box) {
    var more = box.scrollLeft + box.clientWidth < box.scrollWidth - 1;
    box.classList.toggle("table-more-right", more);
  }
  function mark() {
    document.querySelectorAll("article table").forEach(function (table) {
      if (!table.offsetParent) return;
      var box = boxOf(table);
      var wide = box.scrollWidth > box.clientWidth + 1;
      var cue = cueOf(box);
      if (wide && !cue) {
        cue = document.createElement("p");
        cue.className = "table-scroll-cue";
        cue.textContent = CUE;
        box.insertAdjacentElement("beforebegin", cue);
      } else if (!wide && cue) {
        cue.remove();
      }
      box.classList.toggle("table-wide", wide);
      // the width its caption wraps to (course.css): the box's, not the table's
      box.style.setProperty("--table-box-width", box.clientWidth + "px");
      if (!box.dataset.scrollWatched) {
        box.dataset.scrollWatched = "1";
        box.addEventListener("scroll", function () { edge(box); }, { passive: true });
      }
      edge(box);
    });
  }
  var queued = false;
  function schedule() {
    if (queued) return;
    queued = true;
    window.requestAnimationFrame(function () {
      queued = false;
      mark();
    });
  }
  // MathJax typesets formulas in cells after the page has loaded, which widens the table: every table
  // and its box are watched for a change of size.
  var watch = window.ResizeObserver ? new ResizeObserver(schedule) : null;
  function start() {
    mark();
    if (watch) document.querySelectorAll("article table").forEach(function (table) {
      watch.observe(table);
      watch.observe(boxOf(table));
    });
    window.addEventListener("resize", schedule);
    window.addEventListener("load", schedule);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
