// Flatuniverse thread page: the WebSocket client (protocol: docs/WEBSOCKET.md).
// Plain JS, no framework. Everything untrusted (questions, model text, paper metadata) is put in
// the page with textContent; the only HTML inserted is the server's nh3-sanitised `html` field.
(function () {
  "use strict";

  // The chat list's new-chat box: Enter starts the chat, Shift+Enter is a new line.
  const newChat = document.getElementById("new-chat-text");
  if (newChat) {
    newChat.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing && newChat.value.trim()) {
        e.preventDefault();
        newChat.form.requestSubmit();
      }
    });
  }

  // Forms that ask before they act (deleting a chat): `data-confirm` holds the question. Not an
  // inline onsubmit: the Content-Security-Policy allows no inline script (docs/SECURITY.md).
  document.querySelectorAll("form[data-confirm]").forEach((confirmed) => {
    confirmed.addEventListener("submit", (e) => {
      if (!window.confirm(confirmed.dataset.confirm)) e.preventDefault();
    });
  });

  const chat = document.getElementById("chat");
  if (!chat) return;
  const messagesBox = document.getElementById("messages");
  const form = document.getElementById("composer");
  const input = document.getElementById("question");
  const sendButton = document.getElementById("send");
  const stopButton = document.getElementById("stop");
  const connection = document.getElementById("connection");
  const maxChars = parseInt(chat.dataset.maxChars, 10) || 4000;
  let pendingQuestion = chat.dataset.pendingQuestion || "";

  let socket = null;
  let connected = false;
  let busy = false; // an answer is being written in this thread
  let retryDelay = 500;
  let lastEventAt = Date.now();
  // While an answer streams, silence this long means frames may have been lost (an overloaded
  // channel layer drops rather than waits): ask the server where things stand.
  const SILENCE_MS = 15000;
  const answers = new Map(); // message id -> {el, text, sources}
  const finished = new Set(); // message ids that ended here: late frames for them are ignored

  // --- Small DOM helpers -------------------------------------------------------------------------
  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function setStatus(text, kind) {
    connection.textContent = text;
    connection.dataset.kind = kind || "";
  }

  function showNotice(text) {
    let notice = document.getElementById("chat-notice");
    if (!notice) {
      notice = el("p", "error-note");
      notice.id = "chat-notice";
      notice.setAttribute("role", "alert");
      form.insertBefore(notice, form.firstChild);
    }
    notice.textContent = text;
    notice.hidden = !text;
  }

  function updateControls() {
    input.disabled = !connected;
    sendButton.disabled = !connected || busy;
    stopButton.hidden = !busy;
    stopButton.disabled = !connected;
    form.classList.toggle("is-busy", busy);
  }

  // After the user asks, the page follows the answer down as it grows (sources arrive as tall
  // cards, so "near the bottom" alone lost it); scrolling up stops following.
  let following = false;
  // The scroll position that shows the last message just above the composer (on phones the
  // thread list follows the conversation, so the page's own bottom is not the conversation's).
  function conversationEnd() {
    const bottom = messagesBox.getBoundingClientRect().bottom + window.scrollY;
    return Math.max(0, bottom + form.offsetHeight + 12 - window.innerHeight);
  }
  function scrollToEnd(force) {
    if (force) following = true;
    const nearBottom = window.scrollY >= conversationEnd() - 200;
    if (following || nearBottom) window.scrollTo(0, conversationEnd());
  }
  window.addEventListener("wheel", (e) => { if (e.deltaY < 0) following = false; }, { passive: true });
  window.addEventListener("touchmove", () => { following = false; }, { passive: true });

  function anchorPrefix(messageId) {
    return "m" + messageId.replace(/-/g, "").slice(0, 12);
  }

  // --- Messages ----------------------------------------------------------------------------------
  function ensureUserMessage(id, text) {
    if (id && messagesBox.querySelector('.msg-user[data-message-id="' + id + '"]')) return;
    const empty = document.getElementById("empty-note");
    if (empty) empty.remove();
    const wrap = el("div", "msg msg-user");
    if (id) wrap.dataset.messageId = id;
    wrap.appendChild(el("div", "bubble", text));
    messagesBox.appendChild(wrap);
  }

  function ensureAnswer(id) {
    if (answers.has(id)) return answers.get(id);
    let article = messagesBox.querySelector('.msg-assistant[data-message-id="' + id + '"]');
    if (!article) {
      article = el("article", "msg msg-assistant");
      article.dataset.messageId = id;
      article.setAttribute("aria-live", "polite");
      const head = el("div", "msg-head");
      head.appendChild(el("span", "status status-streaming", "Writing…"));
      article.appendChild(head);
      article.appendChild(el("div", "answer"));
      messagesBox.appendChild(article);
    }
    article.dataset.status = "streaming";
    removeStages(article);
    // A server-rendered partial answer is rendered Markdown, not the raw text offsets count in:
    // start empty; the `resume` event sent on connect carries the raw text so far.
    const answerBox = article.querySelector(".answer");
    const state = { el: article, text: "", sources: [] };
    answerBox.classList.add("streaming-text");
    answerBox.textContent = "";
    answerBox.appendChild(el("span", "cursor", "▍"));
    answers.set(id, state);
    return state;
  }

  // Some papers have no vectors yet: say that they were matched by keywords (BM25) alone.
  function markVectorsPending(state) {
    const head = state.el.querySelector(".msg-head");
    if (head.querySelector(".vectors-pending")) return;
    const chip = el("span", "chip chip-warn vectors-pending");
    chip.textContent = VECTORS_PENDING_TEXT;
    chip.title = VECTORS_PENDING_TITLE;
    head.insertBefore(chip, head.querySelector(".status"));
  }
  const VECTORS_PENDING_TEXT = "Keyword match only for papers still being indexed";
  const VECTORS_PENDING_TITLE = "Some papers have no vectors yet; they were found by BM25 alone.";

  // The filters the answer was searched with (chat/understanding/overrides.py words the chips;
  // templates/chat/_chips.html renders the same for saved answers).
  function renderChips(article, chips, filters, userSet) {
    const head = article.querySelector(".msg-head");
    const old = head.querySelector(".filter-chips");
    if (old) old.remove();
    const box = el("div", "filter-chips");
    box.setAttribute("aria-label", "Filters this answer was searched with");
    box.dataset.filters = JSON.stringify(filters || {});
    box.dataset.userSet = JSON.stringify(userSet || {});
    for (const chip of chips || []) {
      const node = el("span", "chip chip-" + chip.kind + (chip.edited ? " chip-edited" : ""));
      node.dataset.kind = chip.kind;
      node.dataset.value = chip.value === null || chip.value === undefined ? "" : String(chip.value);
      if (chip.edited) node.title = "Set by you";
      node.appendChild(el("span", "chip-label", chip.label));
      const remove = el("button", "chip-remove", "×");
      remove.type = "button";
      remove.title = "Ask again without this filter";
      remove.setAttribute("aria-label", "Remove the filter " + chip.label);
      node.appendChild(remove);
      box.appendChild(node);
    }
    const editButton = el("button", "chip-edit link-button small", chips && chips.length ? "Edit filters" : "Add filters");
    editButton.type = "button";
    editButton.title = "Change the window, recency, authors, categories or seed paper and ask again";
    box.appendChild(editButton);
    head.insertBefore(box, head.firstChild);
  }

  function setHead(state, chips, filters, query, analysis) {
    const head = state.el.querySelector(".msg-head");
    if (filters) renderChips(state.el, chips, filters, (analysis || {}).filters);
    if (query && query.trim() !== (state.question || "").trim()) {
      let q = head.querySelector(".query");
      if (!q) {
        q = el("span", "muted small query");
        q.title = "What was searched";
        head.insertBefore(q, head.querySelector(".status"));
      }
      q.textContent = "Searched: " + (query.length > 120 ? query.slice(0, 119) + "…" : query);
    }
  }

  function renderSources(state, id, sources) {
    state.sources = sources || [];
    const old = state.el.querySelector(".sources");
    if (old) old.remove();
    if (!state.sources.length) return;
    const list = el("ol", "sources");
    list.setAttribute("aria-label", "Sources");
    const prefix = anchorPrefix(id);
    for (const s of state.sources) {
      const li = el("li", "card source");
      li.id = prefix + "-source-" + s.number;
      // The thread's number for the paper (chat/references.py), as the saved page shows it.
      li.appendChild(el("span", "source-number", "[" + (s.label || s.number) + "]"));
      const title = el("a", "card-title", s.title);
      title.href = s.url;
      title.rel = "noopener noreferrer nofollow";
      title.target = "_blank";
      li.appendChild(title);
      const meta = el("div", "meta");
      if (appendAuthors(meta, s)) meta.append(" · ");
      meta.append(s.published || "");
      if (s.primary_category) {
        meta.appendChild(document.createTextNode(" · "));
        meta.appendChild(el("span", "tag", s.primary_category));
      }
      meta.appendChild(document.createTextNode(" · "));
      const link = el("a", null, "arXiv:" + (s.cited_as || s.arxiv_id)); // the version read
      link.href = s.url;
      link.rel = "noopener noreferrer nofollow";
      link.target = "_blank";
      meta.appendChild(link);
      meta.appendChild(document.createTextNode(" · "));
      const local = el("a", null, "in the catalogue"); // says if a newer version exists
      local.href = "/papers/" + (s.cited_as || s.arxiv_id) + "/";
      meta.appendChild(local);
      const save = window.flatuniverseSaveMenu && window.flatuniverseSaveMenu(s.arxiv_id); // library.js
      if (save) meta.append(" ", save);
      li.appendChild(meta);
      if (s.kind === "fulltext") li.append(...fullTextCitation(s));
      else if (s.passage) li.appendChild(passageDisclosure(s.passage));
      list.appendChild(li);
    }
    state.el.querySelector(".answer").after(list);
    renderTex(list);
  }

  // Once the answer is final, the cards it does not cite fold behind a button (the thread page
  // renders them so: templates/chat/_sources.html): a passage the retrieval found but the answer
  // never quotes (a title page, an equation) is what a reader checks last. An answer citing
  // nothing keeps every card in view: they are the closest the catalogue has.
  function foldUncited(answerEl) {
    const list = answerEl.querySelector(".sources");
    if (!list || list.classList.contains("collapsed")) return;
    const cited = new Set(
      [...answerEl.querySelectorAll(".answer a.cite")].map((a) => a.dataset.source)
    );
    if (!cited.size) return;
    const uncited = [...list.querySelectorAll(":scope > .source")].filter(
      (li) => !cited.has(li.id.split("-source-").pop())
    );
    if (!uncited.length) return;
    uncited.forEach((li) => li.classList.add("uncited"));
    list.classList.add("collapsed");
    const button = el("button", "link-button more-sources");
    button.type = "button";
    button.dataset.count = String(uncited.length);
    button.textContent = moreSourcesLabel(uncited.length, true);
    list.after(button);
  }

  function moreSourcesLabel(count, collapsed) {
    const passages = count === 1 ? "passage" : "passages";
    return collapsed
      ? "Show " + count + " more " + passages + " found but not quoted"
      : "Hide the " + count + " " + passages + " not quoted";
  }

  function toggleUncited(button) {
    const list = button.previousElementSibling;
    const collapsed = list.classList.toggle("collapsed");
    button.textContent = moreSourcesLabel(Number(button.dataset.count), collapsed);
  }

  // The authors as links to their pages: the URLs come with the card (chat/pipeline/answer.py,
  // papers/templatetags/authors.py), as the saved page's author_links filter draws them.
  function appendAuthors(meta, s) {
    const entries = s.author_links;
    if (!entries || !entries.links) {
      if (!s.authors) return false; // a card saved before cards carried links
      meta.append(s.authors.length > 140 ? s.authors.slice(0, 139) + "…" : s.authors);
      return true;
    }
    if (!entries.links.length) return false;
    entries.links.forEach((author, i) => {
      if (i) meta.append(", ");
      const link = el("a", "author", author.name);
      link.href = author.url;
      meta.appendChild(link);
    });
    if (entries.more) {
      meta.append(" ");
      meta.appendChild(el("span", "muted", "+" + entries.more + " more"));
    }
    return true;
  }

  // The abstract passage an answer used, folded, as templates/chat/_sources.html renders it.
  function passageDisclosure(text) {
    const details = el("details", "passage");
    details.appendChild(el("summary", null, "Passage used"));
    details.appendChild(el("p", "snippet", text));
    return details;
  }

  // A full-text card: its pages, section and PDF link, and the chunk used with the answering
  // sentence highlighted (text nodes only: never HTML; templates/chat/_sources.html does the same).
  function fullTextCitation(s) {
    const where = el("div", "fulltext-cite meta");
    where.appendChild(el("span", "pages", s.pages || ""));
    if (s.section) {
      where.append(" · ");
      where.appendChild(el("span", "section", s.section));
    }
    if (s.pdf_url) {
      where.append(" · ");
      const pdf = el("a", "pdf-link", "PDF at " + (s.pages || "page"));
      pdf.href = s.pdf_url;
      pdf.rel = "noopener noreferrer nofollow";
      pdf.target = "_blank";
      where.appendChild(pdf);
    }
    const passage = s.passage || "";
    const quote = el("blockquote", "passage-quote");
    // The passage's own text of the answering sentence (its line breaks kept, or a quoted table
    // row's line), found by the server (chat.llm.sentences.passage_span); older cards have only
    // the quote. chat/views/threads.py `quoted` splits the same way.
    const mark = s.highlight !== undefined ? s.highlight : s.quote;
    const at = mark ? passage.indexOf(mark) : -1;
    if (at < 0) {
      quote.textContent = passage;
    } else {
      quote.append(passage.slice(0, at));
      quote.appendChild(el("mark", "quote", mark));
      quote.append(passage.slice(at + mark.length));
    }
    return [where, quote];
  }

  // static/js/tex.js, when the page has it: TeX in cards and in answers once complete.
  function renderTex(root) {
    if (window.flatuniverseTex) window.flatuniverseTex.render(root);
  }

  function renderStreamingText(state) {
    const box = state.el.querySelector(".answer");
    // Citations as the thread numbers them (the cards' labels) with a full-text card's pages
    // ("[1, p. 8]"), as the finished answer will (chat/references.py `cite_labels`).
    const labels = {};
    for (const s of state.sources || []) {
      labels[s.number] = (s.label || s.number) + (s.pages ? ", " + s.pages : "");
    }
    box.textContent = state.text.replace(/\[(\d{1,3})\](?!\()/g, (m, n) => "[" + (labels[n] || n) + "]");
    box.appendChild(el("span", "cursor", "▍"));
    scrollToEnd();
  }

  function applyToken(state, offset, text) {
    const have = state.text.length;
    if (offset > have) return; // a gap: the `resume` snapshot that follows fills it
    if (offset + text.length <= have) return; // already shown (joined mid-answer)
    state.text += text.slice(have - offset);
    renderStreamingText(state);
  }

  function finish(id, event) {
    const state = ensureAnswer(id);
    const status = event.status || (event.type === "done" ? "complete" : "failed");
    state.el.dataset.status = status;
    removeStages(state.el);
    const box = state.el.querySelector(".answer");
    box.classList.remove("streaming-text");
    // Sanitised on the server (markdown-it without HTML, then nh3): see chat/markdown.py.
    box.innerHTML = event.html || "";
    renderTex(box);
    const badge = state.el.querySelector(".status");
    badge.className = "status status-" + status;
    badge.textContent = status === "stopped" ? "Stopped" : status === "failed" ? "Failed" : "";
    if (event.type === "error") {
      const note = el("p", "error-note", event.message || "The answer failed.");
      note.setAttribute("role", "alert");
      box.after(note);
    }
    foldUncited(state.el);
    if (event.nothing_relevant && chat.dataset.arxivSearch) offerArxivSearch(state.el);
    renderFollowups(state, event.followups || []);
    if (event.backend) {
      const foot = el("div", "muted small msg-foot", event.backend +
        (event.model && event.model !== event.backend ? " · " + event.model : "") +
        (event.timings && event.timings.total_ms ? " · " + event.timings.total_ms + " ms" : ""));
      state.el.appendChild(foot);
    }
    answers.delete(id);
    finished.add(id);
    busy = false;
    updateControls();
    scrollToEnd();
    following = false;
  }

  function renderFollowups(state, questions) {
    document.querySelectorAll(".followups").forEach((node) => node.remove());
    if (!questions.length) return;
    const box = el("div", "followups");
    box.setAttribute("aria-label", "Suggested follow-up questions");
    for (const q of questions) {
      const button = el("button", "secondary small followup", q);
      button.type = "button";
      button.dataset.question = q;
      box.appendChild(button);
    }
    state.el.appendChild(box);
  }

  // --- Nothing in the catalogue on the question: search arXiv itself, then ask again -------------
  // (POST /api/search/arxiv/ imports and indexes what it finds; templates/chat/_message.html
  // renders the same button for saved answers.)
  function offerArxivSearch(article) {
    const box = el("div", "arxiv-search");
    const button = el("button", "secondary small search-arxiv", "Search arXiv for this");
    button.type = "button";
    box.appendChild(button);
    box.appendChild(document.createTextNode(" "));
    const step = el("span", "muted small arxiv-step");
    step.setAttribute("role", "status");
    box.appendChild(step);
    article.querySelector(".answer").after(box);
  }

  function csrfToken() {
    const field = document.querySelector("input[name=csrfmiddlewaretoken]");
    if (field) return field.value;
    const cookie = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return cookie ? decodeURIComponent(cookie[1]) : "";
  }

  async function searchArxiv(article, button) {
    const step = article.querySelector(".arxiv-step");
    const question = article.dataset.question || "";
    button.disabled = true;
    step.classList.remove("error-note");
    step.textContent = "Searching arXiv…";
    let response, body;
    try {
      response = await fetch("/api/search/arxiv/", {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
        body: JSON.stringify({ q: question }),
      });
      body = await response.json();
    } catch (e) {
      body = {};
    }
    if (!response || !response.ok) {
      // 429 (this hour's searches used), 502 (arXiv unreachable), 400 (nothing to search for).
      step.textContent = (body.error && body.error.message) || "The arXiv search failed; try again later.";
      step.classList.add("error-note");
      button.disabled = false;
      return;
    }
    step.textContent = "Imported " + body.new + " papers from arXiv; asking again…";
    ask(question);
  }

  // --- Progress while answering (`stage` events: understanding, searching, reading, writing) -----
  function showStage(state, stage, detail) {
    let list = state.el.querySelector(".stages");
    if (!list) {
      list = el("ol", "stages");
      list.setAttribute("aria-label", "Progress");
      state.el.querySelector(".msg-head").after(list);
    }
    list.querySelectorAll("li").forEach((li) => li.classList.replace("current", "done"));
    const item = el("li", "current", detail);
    item.dataset.stage = stage;
    list.appendChild(item);
  }

  function removeStages(article) {
    const list = article.querySelector(".stages");
    if (list) list.remove();
  }

  // --- Editing an answer's filters: re-asks its question with the edited `filters` -------------
  function readJSON(text) {
    try {
      return JSON.parse(text || "{}");
    } catch (e) {
      return {};
    }
  }

  // Every filter the answer was searched with.
  function filtersOf(article) {
    const box = article.querySelector(".filter-chips");
    return readJSON(box && box.dataset.filters);
  }

  // What to send: the filters the user had already set on this answer, and what changed now.
  // The rest the question itself says again, so a chip the user never touched stays the
  // question's own (not marked as set by the user).
  function changedFilters(article, edited) {
    const box = article.querySelector(".filter-chips");
    const before = filtersOf(article);
    const send = readJSON(box && box.dataset.userSet);
    for (const [key, value] of Object.entries(edited)) {
      if (JSON.stringify(value) !== JSON.stringify(before[key])) send[key] = value;
    }
    return send;
  }

  function reaskWithout(article, chip) {
    if (!article || !chip) return;
    const filters = filtersOf(article);
    const value = chip.dataset.value;
    switch (chip.dataset.kind) {
      case "window": filters.start = null; filters.end = null; break;
      case "recency": filters.recency_weight = 0; break;
      case "author": filters.authors = (filters.authors || []).filter((a) => a !== value); break;
      case "category": filters.categories = (filters.categories || []).filter((c) => c !== value); break;
      case "seed": filters.arxiv_id = null; break;
      default: return;
    }
    ask(article.dataset.question || "", changedFilters(article, filters));
  }

  function field(form, label, name, type, value, extra) {
    const wrap = el("label", null, label);
    const box = el("input");
    box.name = name;
    box.type = type;
    box.value = value === null || value === undefined ? "" : value;
    Object.assign(box, extra || {});
    wrap.appendChild(box);
    form.appendChild(wrap);
  }

  // How much newer papers count, in words (a bare 0..1 number said nothing); a weight the
  // question set that is not among them keeps its own entry, so asking again changes nothing.
  const RECENCY_CHOICES = [[0, "Any date"], [0.3, "Newer a little"], [0.6, "Newer first"], [0.8, "Newest first"]];

  function recencyField(form, weight) {
    const wrap = el("label", null, "Recency");
    const select = el("select");
    select.name = "recency_weight";
    const choices = RECENCY_CHOICES.slice();
    if (!choices.some(([value]) => value === weight)) {
      const near = choices.reduce((a, b) => (Math.abs(b[0] - weight) < Math.abs(a[0] - weight) ? b : a));
      choices.push([weight, near[1] + " (" + weight + ")"]);
      choices.sort((a, b) => a[0] - b[0]);
    }
    for (const [value, words] of choices) {
      const option = el("option", null, words);
      option.value = String(value);
      option.selected = value === weight;
      select.appendChild(option);
    }
    wrap.appendChild(select);
    form.appendChild(wrap);
  }

  function splitList(text) {
    return text.split(",").map((part) => part.trim()).filter(Boolean);
  }

  function toggleFilterForm(article) {
    if (!article) return;
    const open = article.querySelector(".filter-form");
    if (open) {
      open.remove();
      return;
    }
    const filters = filtersOf(article);
    const form = el("form", "filter-form chip-form");
    form.setAttribute("aria-label", "Edit the filters and ask again");
    field(form, "From", "start", "date", filters.start);
    field(form, "To", "end", "date", filters.end);
    recencyField(form, filters.recency_weight || 0);
    field(form, "Authors", "authors", "text", (filters.authors || []).join(", "), { placeholder: "Surname, Full Name" });
    field(form, "Categories", "categories", "text", (filters.categories || []).join(", "), { placeholder: "cs.CL, cs.LG" });
    field(form, "Papers like", "arxiv_id", "text", filters.arxiv_id, { placeholder: "2309.00267" });
    const apply = el("button", "small", "Ask again");
    apply.type = "submit";
    form.appendChild(apply);
    const cancel = el("button", "small secondary", "Cancel");
    cancel.type = "button";
    cancel.addEventListener("click", () => form.remove());
    form.appendChild(cancel);
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const data = new FormData(form);
      const weight = parseFloat(data.get("recency_weight"));
      ask(article.dataset.question || "", changedFilters(article, {
        start: data.get("start") || null,
        end: data.get("end") || null,
        // The server says what is wrong with a value (invalid_filters); send what was typed.
        recency_weight: Number.isNaN(weight) ? 0 : weight,
        authors: splitList(data.get("authors") || ""),
        categories: splitList(data.get("categories") || ""),
        arxiv_id: (data.get("arxiv_id") || "").trim() || null,
      }));
      form.remove();
    });
    article.querySelector(".msg-head").after(form);
    form.querySelector("input").focus();
  }

  // --- Server events -----------------------------------------------------------------------------
  function onEvent(event) {
    lastEventAt = Date.now();
    const id = event.message_id;
    if (id && finished.has(id)) return;
    switch (event.type) {
      case "start":
        ensureUserMessage(event.user_message_id, event.question);
        ensureAnswer(id).question = event.question;
        answers.get(id).el.dataset.question = event.question;
        setTitleFrom(event.question);
        busy = true;
        showNotice("");
        break;
      case "resume": {
        ensureUserMessage(event.user_message_id, event.question);
        const state = ensureAnswer(id);
        state.question = event.question;
        state.el.dataset.question = event.question;
        setHead(state, event.chips, event.filters, event.query, event.analysis);
        if (event.sources && event.sources.length && !state.sources.length) renderSources(state, id, event.sources);
        if ((event.content || "").length > state.text.length) {
          state.text = event.content;
          renderStreamingText(state);
        }
        busy = true;
        break;
      }
      case "analysis":
        setHead(ensureAnswer(id), event.chips, event.filters, event.query, event.analysis);
        if (event.analysis && event.analysis.vectors_pending) markVectorsPending(ensureAnswer(id));
        break;
      case "stage":
        showStage(ensureAnswer(id), event.stage, event.detail);
        break;
      case "sources":
        renderSources(ensureAnswer(id), id, event.sources);
        break;
      case "token":
        applyToken(ensureAnswer(id), event.offset || 0, event.text || "");
        break;
      case "done":
        finish(id, event);
        break;
      case "error":
        if (id) finish(id, event);
        else showNotice(event.message || "Something went wrong.");
        break;
      case "ready":
        // Answers this page still shows as streaming but the server no longer writes finished
        // while the socket was down: the saved thread has their final text.
        for (const key of answers.keys()) {
          if (key !== event.streaming) {
            location.reload();
            return;
          }
        }
        busy = Boolean(event.streaming);
        break;
      default:
        break; // newer server, older page: ignore what we do not know
    }
    updateControls();
  }

  function setTitleFrom(question) {
    const title = document.getElementById("thread-title");
    if (title && title.textContent.trim() === "New chat" && question) {
      title.textContent = question.length > 80 ? question.slice(0, 79) + "…" : question;
    }
  }

  // --- The socket --------------------------------------------------------------------------------
  function connect() {
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(scheme + location.host + chat.dataset.wsPath);
    setStatus(retryDelay > 500 ? "Reconnecting…" : "Connecting…", "pending");
    socket.addEventListener("open", () => {
      connected = true;
      retryDelay = 500;
      setStatus("Connected", "ok");
      updateControls();
      if (pendingQuestion) {
        const question = pendingQuestion;
        pendingQuestion = "";
        send({ type: "ask", text: question });
      } else {
        input.focus();
      }
    });
    socket.addEventListener("message", (message) => {
      let event;
      try {
        event = JSON.parse(message.data);
      } catch (e) {
        return;
      }
      onEvent(event);
    });
    socket.addEventListener("close", (closed) => {
      connected = false;
      updateControls();
      // Signed out (4401): the page reloads, which shows the log-in page, or the thread again
      // when the session was only renewed (a password change in another tab).
      if (closed.code === 4401) {
        location.reload();
        return;
      }
      // Too many open chats (4429): the `error` before it said so; reconnecting would only be
      // refused again.
      if (closed.code === 4429) {
        setStatus("Disconnected", "bad");
        return;
      }
      setStatus("Disconnected; reconnecting in " + Math.round(retryDelay / 1000) + " s…", "bad");
      setTimeout(connect, retryDelay);
      retryDelay = Math.min(retryDelay * 2, 10000);
    });
  }

  function send(payload) {
    if (!socket || socket.readyState !== WebSocket.OPEN) {
      showNotice("Not connected yet; try again in a moment.");
      return false;
    }
    socket.send(JSON.stringify(payload));
    return true;
  }

  function ask(text, filters) {
    const question = text.trim();
    if (!question) return;
    if (question.length > maxChars) {
      showNotice("Questions are limited to " + maxChars + " characters.");
      return;
    }
    if (busy) {
      showNotice("Wait for the current answer, or stop it.");
      return;
    }
    const frame = { type: "ask", text: question };
    if (filters) frame.filters = filters;
    if (send(frame)) {
      if (!filters) input.value = "";
      showNotice("");
      scrollToEnd(true);
    }
  }

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    ask(input.value);
  });
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      ask(input.value);
    }
  });
  stopButton.addEventListener("click", () => send({ type: "stop" }));
  messagesBox.addEventListener("click", (e) => {
    const followup = e.target.closest(".followup");
    if (followup) ask(followup.dataset.question || "");
    const remove = e.target.closest(".chip-remove");
    if (remove) reaskWithout(remove.closest(".msg-assistant"), remove.closest(".chip"));
    const editButton = e.target.closest(".chip-edit");
    if (editButton) toggleFilterForm(editButton.closest(".msg-assistant"));
    const more = e.target.closest(".more-sources");
    if (more) toggleUncited(more);
    const arxiv = e.target.closest(".search-arxiv");
    if (arxiv && !arxiv.disabled) searchArxiv(arxiv.closest(".msg-assistant"), arxiv);
  });

  setInterval(() => {
    if (busy && connected && Date.now() - lastEventAt > SILENCE_MS) {
      lastEventAt = Date.now();
      send({ type: "sync" });
    }
  }, 5000);

  // Server-rendered answers still streaming (the page was loaded mid-answer) resume on `resume`.
  updateControls();
  connect();
  // A thread opens at its latest answer (where a new one will appear), unless a link names a card.
  if (!window.location.hash && messagesBox.querySelector(".msg-assistant, .msg-user")) {
    window.scrollTo(0, conversationEnd());
  }
})();
