// Paper page: while the full text is queued or being read, poll papers:fulltext-status and
// update the line ("Full text: queued" -> "reading…" -> "read, 12 pages" or "failed: reason").
// Another script that queues the reading (e.g. "Ask about this paper") sets data-state="queued"
// on the line; the polling then starts by itself.
(function () {
  "use strict";
  var line = document.querySelector('[data-role="fulltext-status"]');
  if (!line) return;
  var url = line.getAttribute("data-status-url");
  var POLL_MS = 3000;
  var timer = null;

  function inProgress() {
    var state = line.getAttribute("data-state");
    return state === "queued" || state === "fetching";
  }

  function schedule() {
    if (timer === null && inProgress()) timer = setTimeout(poll, POLL_MS);
  }

  function poll() {
    fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (status) {
        if (!status) return;
        line.textContent = status.label;  // text, never HTML: a reason may quote a server
        line.setAttribute("data-state", status.status);
        line.dispatchEvent(new CustomEvent("fulltext:status", { detail: status, bubbles: true }));
      })
      .catch(function () {})
      .then(function () { timer = null; schedule(); });
  }

  new MutationObserver(schedule).observe(line, { attributes: true, attributeFilter: ["data-state"] });
  schedule();
})();
