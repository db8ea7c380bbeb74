// Live catalogue progress: while indexing, poll /papers/catalogue/ and update the line
// "Indexing N of M papers, about T left" (and the full-text line while papers are re-cut); stop
// polling when both end.
(function () {
  "use strict";
  var section = document.getElementById("catalogue");
  if (!section) return;
  var line = section.querySelector('[data-role="indexing"]');
  var fulltext = section.querySelector('[data-role="fulltext"]');
  var url = section.getAttribute("data-status-url");
  var POLL_MS = 3000;

  function show(status) {
    if (status.progress) {
      line.textContent = status.progress.text;
      line.hidden = false;
    } else if (status.pending_index > 0) {
      line.textContent = status.pending_index.toLocaleString("en") + " papers not yet indexed for semantic search" +
        (status.indexing ? "" : " (waiting for indexing)") + "; keyword search finds them already.";
      line.hidden = false;
    } else {
      line.textContent = "All " + status.papers.toLocaleString("en") + " papers are indexed.";
      line.hidden = false;
    }
    section.setAttribute("data-indexing", status.indexing ? "true" : "false");
    if (fulltext && status.fulltext) {
      fulltext.textContent = status.fulltext.text;
      fulltext.setAttribute("data-recutting", status.fulltext.recutting ? "true" : "false");
    }
  }

  function recutting(status) {
    return Boolean(status.fulltext && status.fulltext.recutting);
  }

  function poll() {
    fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (status) {
        if (!status) return;
        show(status);
        if (status.indexing || status.pending_index > 0 || recutting(status)) window.setTimeout(poll, POLL_MS);
      })
      .catch(function () { window.setTimeout(poll, POLL_MS * 3); });
  }

  var recuttingNow = fulltext && fulltext.getAttribute("data-recutting") === "true";
  if (section.getAttribute("data-indexing") === "true" || !line.hidden || recuttingNow) window.setTimeout(poll, POLL_MS);
})();
