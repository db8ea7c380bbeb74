// Voice, where the browser offers it (progressive enhancement: without it nothing changes).
// - A microphone button in the composer fills the question by speech recognition (the Web
//   Speech API; hidden when the browser has none).
// - "Read aloud" under each finished answer speaks it with speechSynthesis (absent without it).
(function () {
  "use strict";
  const input = document.getElementById("question");
  const messages = document.getElementById("messages");
  const Recognition = window.SpeechRecognition || window.webkitSpeechRecognition;
  const mic = document.getElementById("mic");

  if (mic && input && Recognition) {
    let recognition = null;
    mic.hidden = false;
    mic.addEventListener("click", () => {
      if (recognition) { recognition.stop(); return; }
      recognition = new Recognition();
      recognition.lang = document.documentElement.lang || "en";
      recognition.interimResults = true;
      const before = input.value ? input.value.replace(/\s*$/, " ") : "";
      recognition.onresult = (e) => {
        let heard = "";
        for (const result of e.results) heard += result[0].transcript;
        input.value = before + heard;
      };
      recognition.onend = () => {
        recognition = null;
        mic.setAttribute("aria-pressed", "false");
        input.focus();
      };
      recognition.onerror = () => recognition && recognition.stop();
      mic.setAttribute("aria-pressed", "true");
      recognition.start();
    });
  }

  if (!messages || !("speechSynthesis" in window)) return;
  function addReadAloud(article) {
    if (article.dataset.status !== "complete" || article.querySelector(".read-aloud")) return;
    const button = document.createElement("button");
    button.type = "button";
    button.className = "link-button read-aloud small";
    button.textContent = "Read aloud";
    button.addEventListener("click", () => {
      if (window.speechSynthesis.speaking) {
        window.speechSynthesis.cancel();
        button.textContent = "Read aloud";
        return;
      }
      const answer = article.querySelector(".answer");
      // Citation marks ("[1]") are for the eye; spoken they are noise.
      const text = (answer ? answer.innerText : "").replace(/\[\d+\]/g, "");
      const utterance = new SpeechSynthesisUtterance(text);
      utterance.onend = () => { button.textContent = "Read aloud"; };
      button.textContent = "Stop reading";
      window.speechSynthesis.speak(utterance);
    });
    const answer = article.querySelector(".answer");
    if (answer) answer.after(button);
  }
  const all = () => messages.querySelectorAll(".msg-assistant").forEach(addReadAloud);
  all();
  new MutationObserver(all).observe(messages, {
    subtree: true, childList: true, attributes: true, attributeFilter: ["data-status"],
  });
})();
