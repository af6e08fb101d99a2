// gated console: progressive enhancement only. Every page works without
// this script; with it the approvals queue updates live and relative times
// stay current.
"use strict";

(function () {
  // Relative times: <time datetime data-ago> and <time datetime data-until>.
  function span(ms) {
    var s = Math.floor(ms / 1000);
    if (s < 60) return s + " s";
    var m = Math.floor(s / 60);
    if (m < 60) return m + " min";
    var h = Math.floor(m / 60);
    if (h < 48) return h + " h " + (m % 60) + " min";
    return Math.floor(h / 24) + " days";
  }
  function tick() {
    var now = Date.now();
    document.querySelectorAll("time[data-ago]").forEach(function (el) {
      var d = now - Date.parse(el.getAttribute("datetime"));
      el.textContent = d < 0 ? "just now" : span(d) + " ago";
    });
    document.querySelectorAll("time[data-until]").forEach(function (el) {
      var d = Date.parse(el.getAttribute("datetime")) - now;
      el.textContent = d <= 0 ? "expired" : "in " + span(d);
    });
  }
  tick();
  setInterval(tick, 10000);

  // The live queue: the server sends an event whenever an approval changes;
  // the page then fetches itself and swaps in the new queue, keeping the
  // cards already shown (and whatever reason is being typed into them).
  var live = document.getElementById("live");
  if (!live || !live.dataset.events || !window.EventSource || !window.DOMParser) return;

  var pending = null;
  var busy = false;

  function say(text) { live.textContent = text; }
  function clock() { return new Date().toLocaleTimeString(); }

  function refresh() {
    if (busy) { schedule(); return; }
    busy = true;
    fetch(window.location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (res) {
        if (!res.ok || res.url.indexOf("/ui/login") >= 0) throw new Error("signed out");
        return res.text();
      })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.getElementById("queue");
        var old = document.getElementById("queue");
        if (!fresh || !old) throw new Error("no queue");
        swap(old, fresh);
      })
      .catch(function (err) {
        if (err && err.message === "signed out") {
          say("Live updates stopped: reload the page (you may need to sign in again).");
          source.close();
        } else {
          say("Live updates paused: gated cannot be reached; retrying…");
        }
      })
      .then(function () { busy = false; });
  }

  function swap(old, fresh) {
    var kept = {};
    old.querySelectorAll("li.card[data-id]").forEach(function (li) { kept[li.dataset.id] = li; });
    var active = document.activeElement;
    var activeId = active && active.id;
    var sel = active && "selectionStart" in active ? [active.selectionStart, active.selectionEnd] : null;
    var added = [];
    fresh.querySelectorAll("li.card[data-id]").forEach(function (li) {
      var mine = kept[li.dataset.id];
      if (mine) {
        li.replaceWith(mine);
      } else {
        li.classList.add("fresh");
        li.addEventListener("animationend", function () { li.classList.remove("fresh"); }, { once: true });
        var a = li.querySelector(".card-title a");
        added.push(a ? a.textContent : "a call");
      }
    });
    old.replaceWith(document.adoptNode(fresh));
    tick();
    if (activeId) {
      var again = document.getElementById(activeId);
      if (again) {
        again.focus();
        if (sel && again.setSelectionRange) again.setSelectionRange(sel[0], sel[1]);
      }
    }
    var n = fresh.querySelectorAll("li.card[data-id]").length;
    var text = "Live · " + n + " waiting · updated " + clock();
    if (added.length) text = "New request: " + added.join(", ") + ". " + text;
    say(text);
  }

  function schedule() {
    if (pending) clearTimeout(pending);
    pending = setTimeout(function () { pending = null; refresh(); }, 250);
  }

  var source = new EventSource(live.dataset.events);
  source.addEventListener("open", function () { say("Live · new requests appear here as they arrive."); });
  source.addEventListener("approval", schedule);
  source.addEventListener("resync", schedule);
  source.addEventListener("error", function () {
    if (source.readyState === EventSource.CLOSED) {
      say("Live updates stopped: reload the page.");
    } else {
      say("Live updates paused; reconnecting…");
      schedule(); // catch up on what changed while away
    }
  });
})();
