// Glue between the ipywidgets HTML manager and this site's local MathJax 3.
(function () {
  // 1. The manager finds its font files relative to the AMD module path of
  //    "@jupyter-widgets/html-manager/dist": point that path at the copy this site serves.
  var here = document.currentScript.src;
  var dist = here.replace(/widgets-shim\.js(\?.*)?$/, "vendor/html-manager");
  window.requirejs.config({ paths: { "@jupyter-widgets/html-manager/dist": dist } });

  // 2. Widget labels are typeset through the MathJax 2 call MathJax.Hub.Queue, which
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
