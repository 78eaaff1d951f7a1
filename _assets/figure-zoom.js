// Figures a phone shows smaller than they were drawn open at full size on a tap (or click, or Enter).
// A figure is drawn at 2 image pixels per CSS pixel (selfattn.plots.DENSITY); on a narrow screen the
// page shrinks it to the column, and its text with it. Tapping such a figure shows it at its own size
// (natural width / DENSITY CSS px) in a full-screen panel that scrolls both ways; tapping again, or
// Escape, closes it. Pinch zoom stays available everywhere (the page's viewport allows it).
// Each such figure says so under it ("Tap to enlarge", a button that opens it too): nothing else tells a
// phone reader that a figure opens larger.
(function () {
  var DENSITY = 2;
  function fullWidth(img) {
    return img.naturalWidth / DENSITY;
  }
  function shrunk(img) {
    return img.naturalWidth > 0 && img.getBoundingClientRect().width < fullWidth(img) - 1;
  }
  function figureOf(target) {
    var img = target && target.closest ? target.closest("img") : null;
    if (!img || img.closest(".figure-zoom")) return null;
    if (!img.closest("article, .bd-article, .widget-subarea")) return null;
    return shrunk(img) ? img : null;
  }
  var panel = null;
  var opener = null;
  function close() {
    if (!panel) return;
    panel.remove();
    panel = null;
    document.documentElement.classList.remove("figure-zoom-open");
    if (opener) opener.focus({ preventScroll: true });
    opener = null;
  }
  function open(img) {
    close();
    opener = img;
    panel = document.createElement("div");
    panel.className = "figure-zoom";
    panel.setAttribute("role", "dialog");
    panel.setAttribute("aria-modal", "true");
    panel.setAttribute("aria-label", "Figure at full size: " + (img.alt || "") + " (tap or press Escape to close)");
    panel.tabIndex = -1;
    var big = document.createElement("img");
    big.src = img.currentSrc || img.src;
    big.alt = img.alt || "";
    big.style.width = fullWidth(img) + "px";
    big.style.maxWidth = "none";
    var hint = document.createElement("p");
    hint.className = "figure-zoom-hint";
    hint.textContent = "Full size: scroll to see all of it; tap to close.";
    panel.appendChild(hint);
    panel.appendChild(big);
    panel.addEventListener("click", close);
    document.body.appendChild(panel);
    document.documentElement.classList.add("figure-zoom-open");
    panel.focus({ preventScroll: true });
  }
  function cueOf(img) {
    var next = img.nextElementSibling;
    return next && next.classList.contains("figure-zoom-cue") ? next : null;
  }
  document.addEventListener("click", function (e) {
    var cue = e.target && e.target.closest ? e.target.closest(".figure-zoom-cue") : null;
    var img = cue ? cue.previousElementSibling : figureOf(e.target);
    if (img && cue && !shrunk(img)) img = null;
    if (!img) return;
    e.preventDefault();
    open(img);
  });
  document.addEventListener("keydown", function (e) {
    if (e.key === "Escape") close();
    else if (e.key === "Enter" && figureOf(document.activeElement)) open(document.activeElement);
  });
  // Shrunk figures say they open larger (a zoom-in pointer, a title and a cue under them), and take
  // keyboard focus.
  function cueText() {
    var touch = window.matchMedia("(pointer: coarse), (max-width: 540px)").matches;
    return (touch ? "Tap" : "Click") + " to enlarge";
  }
  function mark() {
    document.querySelectorAll("article img, .widget-subarea img").forEach(function (img) {
      var on = shrunk(img);
      var cue = cueOf(img);
      if (on && !cue) {
        cue = document.createElement("button");
        cue.type = "button";
        cue.className = "figure-zoom-cue";
        img.insertAdjacentElement("afterend", cue);
      } else if (!on && cue) {
        cue.remove();
      }
      if (on && cue.textContent !== cueText()) cue.textContent = cueText();
      if (on === img.classList.contains("figure-zoomable")) return;
      img.classList.toggle("figure-zoomable", on);
      if (on) {
        img.setAttribute("tabindex", "0");
        img.title = "Tap to see this figure at full size";
      } else {
        img.removeAttribute("tabindex");
        img.removeAttribute("title");
      }
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
  function start() {
    mark();
    window.addEventListener("resize", schedule);
    window.addEventListener("load", schedule);
    document.addEventListener("load", schedule, true);  // an image decoded later (widget frames)
    new MutationObserver(schedule).observe(document.body, { subtree: true, childList: true });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
