// Glue between the ipywidgets HTML manager and this site's local MathJax 3.
(function () {
  // 1. Widget labels are typeset through the MathJax 2 call MathJax.Hub.Queue, which
  //    MathJax 3 lacks.  Give both the configuration object (present before MathJax has
  //    loaded) and the loaded MathJax a Hub that forwards to MathJax 3's typesetPromise.
  var hub = {
    Queue: function (job) {
      var el = job && job[2];
      var mj = window.MathJax;
      if (el && mj && mj.typesetPromise) {
        mj.typesetPromise([el]).catch(function () {});
      }
    },
  };
  var config = window.MathJax;
  if (config && typeof config === "object" && !config.version) {
    config.Hub = hub;
    config.startup = config.startup || {};
    config.startup.ready = function () {
      window.MathJax.startup.defaultReady();
      window.MathJax.Hub = hub;
    };
  } else if (config && !config.Hub) {
    config.Hub = hub;
  }
})();

// 2. Accessible names and values for the widget controls. The HTML manager draws a slider handle
//    and toggle buttons with no name a screen reader can announce (the description is a bare
//    <label> tied to nothing, and the slider's value text is its internal index). Name every
//    control after its description, announce the slider's shown value ("head width d_k 64"),
//    and expose which toggle button is pressed; kept in step as the reader moves the controls.
(function () {
  function text(el) {
    return el ? el.textContent.replace(/\s+/g, " ").trim() : "";
  }
  function label(box) {
    return text(box.querySelector(":scope > .widget-label")) .replace(/:$/, "");
  }
  function update() {
    document.querySelectorAll(".widget-slider").forEach(function (box) {
      var handle = box.querySelector(".noUi-handle");
      if (!handle) return;
      var name = label(box) || "slider";
      var value = text(box.querySelector(".widget-readout"));
      if (handle.getAttribute("aria-label") !== name) handle.setAttribute("aria-label", name);
      var valuetext = value ? name + " " + value : name;
      if (handle.getAttribute("aria-valuetext") !== valuetext) handle.setAttribute("aria-valuetext", valuetext);
    });
    document.querySelectorAll(".widget-toggle-buttons").forEach(function (box) {
      var name = label(box) || "choice";
      if (box.getAttribute("role") !== "group") box.setAttribute("role", "group");
      if (box.getAttribute("aria-label") !== name) box.setAttribute("aria-label", name);
      box.querySelectorAll("button").forEach(function (button) {
        var pressed = button.classList.contains("mod-active") ? "true" : "false";
        if (button.getAttribute("aria-pressed") !== pressed) button.setAttribute("aria-pressed", pressed);
        var own = text(button);
        var full = name + ": " + own;
        if (button.getAttribute("aria-label") !== full) button.setAttribute("aria-label", full);
      });
    });
  }
  var queued = false;
  function schedule() {
    if (queued) return;
    queued = true;
    window.requestAnimationFrame(function () {
      queued = false;
      update();
    });
  }
  function start() {
    update();
    new MutationObserver(schedule).observe(document.body, {
      // aria-valuetext too: the slider library writes its index there after a move, maybe after the
      // readout changed, and the value announced must not stay that index
      subtree: true, childList: true, characterData: true, attributes: true,
      attributeFilter: ["class", "aria-valuetext", "aria-pressed"],
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
