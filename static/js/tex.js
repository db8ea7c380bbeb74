// TeX in titles, abstracts, snippets, source cards and answers ("$\neq$", "$\sim$12,000",
// "$\Psi$PO"), rendered with KaTeX served from static/vendor/katex (no CDN).
//
// Safe by construction: only text nodes are read, and each $...$ or \(...\) in one becomes a
// span that KaTeX fills from the TeX (trust: false, so \href, \url, \htmlClass... are refused;
// throwOnError: false, so bad TeX shows as red source, never breaks the page). No string is ever
// parsed as HTML, so nothing the server's sanitiser removed can come back. The page keeps the
// TeX source: search and exports read it from the server, and KaTeX's MathML copy carries it.
//
// The same delimiters as chat/markdown.py's TeX rule: "$" opens before a non-space, closes after
// one ("$5 and $10" stays text), never across lines.
(function () {
  "use strict";
  var MATH = /\$(?=[^$\s])([^$\n]*?[^$\s\\])\$|\$([^$\s])\$|\\\(([\s\S]+?)\\\)/g;
  var SKIP = "script, style, textarea, input, select, option, code, pre, .katex, [data-no-tex], " +
    ".cursor, [data-status='streaming'] .answer";
  var OPTIONS = { throwOnError: false, trust: false, strict: "ignore", maxSize: 10, maxExpand: 200 };

  function renderText(node) {
    var text = node.nodeValue;
    MATH.lastIndex = 0;
    var match, last = 0, fragment = null;
    while ((match = MATH.exec(text)) !== null) {
      var tex = match[1] || match[2] || match[3];
      if (!fragment) fragment = document.createDocumentFragment();
      if (match.index > last) fragment.appendChild(document.createTextNode(text.slice(last, match.index)));
      var span = document.createElement("span");
      span.className = "tex";
      try {
        window.katex.render(tex, span, OPTIONS);
      } catch (error) {
        span.textContent = match[0]; // KaTeX refused it outright: show the source as it was
      }
      fragment.appendChild(span);
      last = MATH.lastIndex;
    }
    if (!fragment) return;
    if (last < text.length) fragment.appendChild(document.createTextNode(text.slice(last)));
    node.parentNode.replaceChild(fragment, node);
  }

  function render(root) {
    if (!root || !window.katex) return;
    var walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
      acceptNode: function (node) {
        var value = node.nodeValue;
        if (value.indexOf("$") < 0 && value.indexOf("\\(") < 0) return NodeFilter.FILTER_REJECT;
        var parent = node.parentElement;
        return parent && !parent.closest(SKIP) ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_REJECT;
      },
    });
    var nodes = [];
    while (walker.nextNode()) nodes.push(walker.currentNode);
    nodes.forEach(renderText); // collected first: replacing nodes mid-walk would end it early
  }

  window.flatuniverseTex = { render: render };
  function start() { render(document.querySelector("main")); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
