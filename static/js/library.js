// The "Save" menu (templates/library/_save.html): saves without leaving the page, and makes the
// menu for source cards written live by chat.js (from the <template id="save-menu-template">).
(function () {
  "use strict";

  document.addEventListener("submit", async function (event) {
    const form = event.target;
    if (!form.classList || !form.classList.contains("save-form")) return;
    event.preventDefault();
    const status = form.querySelector(".save-status");
    status.textContent = "Saving…";
    try {
      const response = await fetch(form.action, {
        method: "POST", body: new FormData(form),
        headers: { Accept: "application/json" }, credentials: "same-origin",
      });
      const data = await response.json();
      status.textContent = response.ok ? data.message : data.error.message;
      status.classList.toggle("error", !response.ok);
      if (response.ok && data.created && form.new_name && form.new_name.value) addOption(data.collection);
      if (form.new_name) form.new_name.value = "";
    } catch (err) {
      status.textContent = "Could not save: " + err.message;
    }
  });

  // A collection made from one menu appears in every menu on the page.
  function addOption(collection) {
    for (const menu of document.querySelectorAll(".save-form select[name=collection]")) {
      const option = document.createElement("option");
      option.value = collection.id;
      option.textContent = collection.name;
      menu.appendChild(option);
    }
  }

  // A save menu for a paper, or null when the page has none (signed out).
  window.flatuniverseSaveMenu = function (arxivId) {
    const template = document.getElementById("save-menu-template");
    if (!template || !arxivId) return null;
    const menu = template.content.firstElementChild.cloneNode(true);
    menu.querySelector("input[name=arxiv_id]").value = arxivId;
    return menu;
  };
})();
