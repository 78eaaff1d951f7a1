// The search page works from file:// as over http: snippets and one entry per page.
// Sphinx's search fetches each hit's page to cut a snippet from it; a browser refuses fetch() on
// file://, so no snippet showed. The build writes every page's main text to search-texts.js
// (window.SELFATTN_SEARCH_PAGES, keyed by document name); fetches of those pages are answered from it.
// Sphinx also lists a page once per way it matched (a glossary term's index entry and the full text
// both give "Glossary"); only the best-scoring entry of each page and title is kept.
(function () {
  var realFetch = window.fetch ? window.fetch.bind(window) : null;
  function stored(input) {
    var pages = window.SELFATTN_SEARCH_PAGES;
    if (!pages) return null;
    var rootAttr = document.documentElement.dataset.content_root || "";
    var root = new URL(rootAttr, document.baseURI).href;
    var url = new URL(String(input && input.url ? input.url : input), document.baseURI);
    var abs = url.href.split("#")[0].split("?")[0];
    if (abs.indexOf(root) !== 0) return null;
    var doc = decodeURI(abs.slice(root.length)).replace(/\.html$/, "");
    return Object.prototype.hasOwnProperty.call(pages, doc) ? pages[doc] : null;
  }
  window.fetch = function (input, init) {
    var html = stored(input);
    if (html !== null) return Promise.resolve(new Response(html, { headers: { "Content-Type": "text/html" } }));
    return realFetch ? realFetch(input, init) : Promise.reject(new TypeError("fetch unavailable"));
  };
  function patch() {
    // searchtools.js declares Search with const: a global name, not a property of window
    if (typeof Search === "undefined" || !Search._performSearch || Search._performSearch.selfattnOnce) return;
    var perform = Search._performSearch;
    var once = function () {
      var results = perform.apply(Search, arguments);   // ascending score: the best of each is last
      var seen = new Set();
      var kept = [];
      for (var i = results.length - 1; i >= 0; i--) {
        var key = results[i][0] + "\u0000" + results[i][1];
        if (seen.has(key)) continue;
        seen.add(key);
        kept.push(results[i]);
      }
      return kept.reverse();
    };
    once.selfattnOnce = true;
    Search._performSearch = once;
  }
  patch();
  document.addEventListener("DOMContentLoaded", patch);
})();
