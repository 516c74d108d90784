// The text2sql page: no framework, no build step. Every value from the
// service is inserted with textContent, never as HTML.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const el = {
    health: $("health"), token: $("token"), forget: $("forget"), question: $("question"),
    generate: $("generate"), ask: $("ask"), status: $("status"), error: $("error"),
    answer: $("answer"), sql: $("sql"), questionId: $("question-id"), run: $("run"),
    low: $("low-confidence"), reused: $("reused"), explanation: $("explanation"),
    tables: $("tables"), items: $("items"), trail: $("trail"), attempts: $("attempts"),
    selection: $("selection"), selectionReason: $("selection-reason"), candidates: $("candidates"),
    result: $("result"), match: $("match"), resultMeta: $("result-meta"), rows: $("rows"),
    newConversation: $("new-conversation"), route: $("route"),
    conversation: $("conversation"), thread: $("thread"), saveRow: $("save-row"), saveNote: $("save-note"),
    saveAnswer: $("save-answer"), saveStatus: $("save-status"), saved: $("saved"), savedList: $("saved-list"),
    voteUp: $("vote-up"), voteDown: $("vote-down"), feedbackStatus: $("feedback-status"),
    chart: $("chart"), chartControls: $("chart-controls"), showChart: $("show-chart"), chartNote: $("chart-note"),
  };
  const TOKEN_KEY = "text2sql.token";
  const buttons = [el.generate, el.ask, el.run, el.voteUp, el.voteDown, el.saveAnswer];

  try { el.token.value = sessionStorage.getItem(TOKEN_KEY) || ""; } catch (e) { /* storage disabled */ }
  el.token.addEventListener("change", () => {
    try { sessionStorage.setItem(TOKEN_KEY, el.token.value.trim()); } catch (e) { /* ignore */ }
  });
  el.forget.addEventListener("click", () => {
    el.token.value = "";
    try { sessionStorage.removeItem(TOKEN_KEY); } catch (e) { /* ignore */ }
    el.token.focus();
  });

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
  function add(parent, tag, text, cls) {
    const n = document.createElement(tag);
    if (text !== undefined && text !== null) n.textContent = String(text);
    if (cls) n.className = cls;
    parent.appendChild(n);
    return n;
  }
  function setStatus(text) { el.status.textContent = text || ""; }
  function showError(text, focusTarget) {
    el.error.textContent = text;
    el.error.hidden = false;
    (focusTarget || el.error).focus();
  }
  function hideError() { el.error.hidden = true; el.error.textContent = ""; }
  function busy(on) { buttons.forEach((b) => { b.disabled = on; }); }

  // api posts body to path (or, with method GET or DELETE, sends no
  // body) and returns the parsed JSON of a 2xx answer; otherwise it
  // throws an Error whose message is for people.
  async function api(path, body, method) {
    method = method || "POST";
    const headers = { "Accept": "application/json" };
    if (method === "POST") headers["Content-Type"] = "application/json";
    const token = el.token.value.trim();
    if (token) headers["Authorization"] = "Bearer " + token;
    let resp;
    try {
      resp = await fetch(path, { method, headers, body: method === "POST" ? JSON.stringify(body) : undefined, credentials: "omit" });
    } catch (e) {
      throw new Error("The service cannot be reached. Check your connection and try again.");
    }
    let data = null;
    try { data = await resp.json(); } catch (e) { /* not JSON */ }
    if (resp.ok && data) return data;
    const code = data && data.error ? data.error.code : "";
    const msg = data && data.error ? data.error.message : "HTTP " + resp.status;
    const rid = data && data.request_id ? " (request " + data.request_id + ")" : "";
    const err = new Error(msg + rid);
    err.code = code;
    if (resp.status === 401) {
      err.message = token ? "Your access token was refused. Enter a valid token." : "An access token is required. Enter it above.";
      err.focus = el.token;
    } else if (resp.status === 429) {
      const after = resp.headers.get("Retry-After");
      err.message = "Too many requests. Try again in " + (after || "a few") + " seconds.";
    } else if (code === "empty_question") {
      err.focus = el.question;
    }
    throw err;
  }

  function renderContext(ctx) {
    clear(el.tables);
    const tbody = el.items.tBodies[0];
    clear(tbody);
    if (!ctx) return;
    for (const t of ctx.tables) {
      const li = add(el.tables, "li");
      add(li, "code", t.name);
      add(li, "span", " — " + t.reason);
    }
    for (const it of ctx.items) {
      const tr = add(tbody, "tr");
      add(tr, "td", it.kind);
      add(tr, "td", it.name);
      add(tr, "td", it.score.toFixed(4));
      add(tr, "td", it.similarity.toFixed(3));
      add(tr, "td", it.provenance);
    }
  }

  function errorText(e) {
    return e.kind + ": " + e.message + (e.hint ? " (hint: " + e.hint + ")" : "");
  }

  function renderTrail(attempts) {
    clear(el.attempts);
    el.trail.hidden = !attempts || attempts.length < 2;
    if (el.trail.hidden) return;
    for (const a of attempts) {
      const li = add(el.attempts, "li");
      add(li, "code", a.sql || "(no SQL)");
      let outcome = "ok";
      if (a.error) outcome = a.error;
      else if (a.result && a.result.error) outcome = errorText(a.result.error);
      else if (a.verdict && !a.verdict.ok) outcome = "judge: fault in " + a.verdict.stage + ": " + a.verdict.reason;
      add(li, "div", "→ " + outcome, outcome === "ok" ? "" : "muted");
    }
  }

  // renderSelection lists the candidates of the answer's attempt, each
  // with its result group or error, the chosen one marked, under why it
  // won.
  function renderSelection(s) {
    clear(el.candidates);
    el.selection.hidden = !s;
    if (!s) return;
    el.selectionReason.textContent = s.method + ": " + s.reason;
    s.candidates.forEach((c, i) => {
      const chosen = i === s.winner && s.method !== "none";
      const li = add(el.candidates, "li", null, chosen ? "chosen" : "");
      add(li, "code", c.sql || "(no SQL)");
      let outcome = "result group " + c.group;
      if (c.error) outcome = c.error;
      else if (c.result && c.result.error) outcome = errorText(c.result.error);
      else if (!c.answerable) outcome = "declined";
      else if (c.group === 0) outcome = "no result";
      if (chosen) outcome += " (chosen)";
      add(li, "div", "→ " + outcome, c.group > 0 ? "" : "muted");
    });
  }

  function renderAnswer(a) {
    el.answer.hidden = false;
    el.feedbackStatus.textContent = "";
    el.sql.value = a.sql || "";
    el.explanation.textContent = a.explanation || (a.status === "declined" ? "The model declined: the question does not look answerable from this database." : "");
    el.low.hidden = !a.low_confidence;
    el.reused.hidden = !a.reused_example;
    el.reused.textContent = a.reused_example ? "Reused verified example " + a.reused_example + " (no model call)." : "";
    renderContext(a.context);
    renderTrail(a.attempts);
    renderSelection(a.selection);
  }

  // The Vega builds (served from assets/vendor/) load on the first chart,
  // in order, since each needs the one before.
  const VEGA = ["vega.min.js", "vega-lite.min.js", "vega-embed.min.js", "vega-interpreter.min.js"];
  let vegaReady = null;
  function loadVega() {
    if (!vegaReady) {
      vegaReady = VEGA.reduce((prev, file) => prev.then(() => new Promise((resolve, reject) => {
        const s = document.createElement("script");
        s.src = "assets/vendor/" + file;
        s.onload = resolve;
        s.onerror = () => reject(new Error("cannot load " + file));
        document.head.appendChild(s);
      })), Promise.resolve());
      vegaReady.catch(() => { vegaReady = null; });
    }
    return vegaReady;
  }

  // renderChart draws spec (a Vega-Lite spec from the service) on a canvas,
  // with Vega's expression interpreter: the page's CSP has no 'unsafe-eval'.
  let chartSpec = null;
  async function renderChart(spec) {
    chartSpec = spec || null;
    clear(el.chart);
    delete el.chart.dataset.drawn;
    el.chartNote.textContent = "";
    el.chartControls.hidden = !chartSpec;
    el.chart.hidden = !chartSpec || !el.showChart.checked;
    if (el.chart.hidden) return;
    const enc = chartSpec.encoding;
    el.chart.setAttribute("aria-label", chartSpec.mark.type + " chart of " +
      ((enc.y && enc.y.title) || "the values") + " by " + ((enc.x && enc.x.title) || "row") + "; the table below has the same data");
    try {
      await loadVega();
      if (chartSpec !== spec) return; // a newer result arrived meanwhile
      // No injected <style> (embed's, the tooltip's): the page's CSP has
      // no inline styles; style.css carries what they would.
      await vegaEmbed(el.chart, spec, { renderer: "canvas", actions: false, ast: true, expr: vega.expressionInterpreter,
        defaultStyle: false, tooltip: { disableDefaultStyle: true } });
      el.chart.dataset.drawn = "true";
    } catch (e) {
      el.chart.hidden = true;
      el.chartNote.textContent = "The chart could not be drawn (" + e.message + ").";
    }
  }
  el.showChart.addEventListener("change", () => renderChart(chartSpec));

  function renderResult(r, matched, summary, chart) {
    el.result.hidden = false;
    const thead = el.rows.tHead, tbody = el.rows.tBodies[0];
    clear(thead); clear(tbody);
    el.match.hidden = matched === undefined || matched === null;
    if (!el.match.hidden) {
      el.match.className = matched ? "matched" : "mismatched";
      el.match.textContent = (matched ? "✓ Matches the answer key" : "✗ Does not match the answer key") + (summary ? " — " + summary : "");
    }
    renderChart(r.error ? null : chart);
    if (r.error) {
      el.resultMeta.textContent = "";
      showError((r.error.refused ? "Refused — " : "The statement failed — ") + errorText(r.error), el.sql);
      return;
    }
    const hr = add(thead, "tr");
    for (const c of r.columns) add(hr, "th", c).scope = "col";
    for (const row of r.rows) {
      const tr = add(tbody, "tr");
      for (const v of row) {
        if (v === null) add(tr, "td", "NULL", "null");
        else add(tr, "td", v);
      }
    }
    el.resultMeta.textContent = r.row_count + (r.row_count === 1 ? " row" : " rows") +
      (r.truncated ? " (truncated at the row cap)" : "") + " in " + r.duration_ms.toFixed(1) + " ms";
    el.result.focus();
  }

  async function generate() {
    const q = el.question.value.trim();
    if (!q) { showError("Type a question first.", el.question); return; }
    hideError(); busy(true); setStatus("Writing SQL…");
    try {
      const a = await api("v1/generate", { question: q });
      el.result.hidden = true;
      renderAnswer(a);
      if (a.status === "failed" && a.error) showError("No usable SQL: " + a.error.message);
      setStatus(a.status === "declined" ? "Declined." : "SQL ready: review it, then Run.");
      if (a.status !== "failed") el.sql.focus();
    } catch (e) {
      setStatus(""); showError(e.message, e.focus);
    } finally { busy(false); }
  }

  // Ask goes through a conversation when the service keeps them, so a
  // follow-up ("and for 2019?") is read with the earlier questions; else
  // through /v1/ask. conversation is its id, null before the first Ask;
  // conversations is false once the service said it keeps none.
  let conversation = null, conversations = true;
  async function converse(q) {
    if (conversations && !conversation) {
      try {
        conversation = (await api("v1/conversations", {})).conversation_id;
      } catch (e) {
        if (e.code !== "not_configured") throw e;
        conversations = false;
      }
    }
    if (!conversations) return { answer: await api("v1/ask", { question: q }) };
    return api("v1/conversations/" + encodeURIComponent(conversation) + "/messages", { message: q });
  }
  el.newConversation.addEventListener("click", () => {
    conversation = null;
    el.route.hidden = true;
    clear(el.thread);
    el.conversation.hidden = true;
    el.saveStatus.textContent = "";
    setStatus("New conversation: earlier questions are forgotten.");
    el.question.focus();
  });

  // addTurn adds a reply to the thread: the message, how it was routed
  // or rewritten, the reply, and the related saved answers.
  function addTurn(q, reply) {
    el.conversation.hidden = false;
    const li = add(el.thread, "li");
    add(li, "strong", q);
    let how = " — " + reply.route.replace("_", " ");
    if (reply.standalone && reply.standalone !== q) how += ", asked as: " + reply.standalone;
    if (reply.saved_answer) how += ", from saved answer " + reply.saved_answer + " (no model call)";
    add(li, "span", how, "muted");
    add(li, "div", reply.text);
    if (reply.related && reply.related.length) {
      add(li, "div", "Related saved answers: " + reply.related.map((r) => r.question).join("; "), "muted");
    }
    el.saveRow.hidden = !(reply.route === "data" && reply.answer && reply.answer.result && !reply.answer.result.error);
    el.saveStatus.textContent = "";
  }

  // renderSaved lists the caller's saved answers, each with a button
  // that deletes it; a click on the question puts it in the box.
  function renderSaved(list) {
    clear(el.savedList);
    el.saved.hidden = list.length === 0;
    for (const a of list) {
      const li = add(el.savedList, "li");
      const q = add(li, "a", a.question);
      q.href = "#question";
      q.addEventListener("click", (ev) => { ev.preventDefault(); el.question.value = a.question; el.question.focus(); });
      add(li, "span", " — " + a.created.slice(0, 10) + (a.note ? " — " + a.note : "") +
        " — " + a.row_count + (a.row_count === 1 ? " row" : " rows"), "muted");
      const del = add(li, "button", "Delete");
      del.type = "button";
      del.setAttribute("aria-label", "Delete the saved answer " + a.question);
      del.addEventListener("click", async () => {
        try {
          await api("v1/saved/" + encodeURIComponent(a.id), null, "DELETE");
          await loadSaved();
        } catch (e) { showError(e.message, e.focus); }
      });
    }
  }
  // loadSaved shows the saved answers when the service keeps them.
  async function loadSaved() {
    try {
      renderSaved((await api("v1/saved", null, "GET")).saved);
    } catch (e) {
      if (e.code !== "not_configured") throw e;
      el.saved.hidden = true;
    }
  }

  el.saveAnswer.addEventListener("click", async () => {
    if (!conversation) return;
    hideError(); busy(true); el.saveStatus.textContent = "Saving…";
    try {
      const r = await api("v1/conversations/" + encodeURIComponent(conversation) + "/saved", { note: el.saveNote.value.trim() });
      el.saveStatus.textContent = "Saved: " + r.saved.question;
      el.saveNote.value = "";
      await loadSaved();
    } catch (e) {
      el.saveStatus.textContent = "";
      showError(e.message, e.focus);
    } finally { busy(false); }
  });

  async function ask() {
    const q = el.question.value.trim();
    if (!q) { showError("Type a question first.", el.question); return; }
    hideError(); busy(true); setStatus("Answering…");
    try {
      const first = conversation === null && conversations;
      const reply = await converse(q);
      el.route.hidden = !reply.route;
      el.route.textContent = reply.route ? "Route: " + reply.route.replace("_", " ") +
        (reply.standalone && reply.standalone !== q ? " — asked as: " + reply.standalone : "") : "";
      if (reply.route) addTurn(q, reply);
      if (first && reply.route) loadSaved().catch(() => {});
      const a = reply.answer;
      if (!a) {
        // Small talk or a question about the last answer: no new SQL.
        el.explanation.textContent = reply.text;
        setStatus(reply.text);
        return;
      }
      renderAnswer(a);
      if (a.result) renderResult(a.result, undefined, undefined, a.chart);
      else el.result.hidden = true;
      if (a.status === "failed" && a.error) showError("No answer: " + a.error.message);
      setStatus("Status: " + a.status + ".");
    } catch (e) {
      setStatus(""); showError(e.message, e.focus);
    } finally { busy(false); }
  }

  async function run() {
    const sql = el.sql.value.trim();
    if (!sql) { showError("There is no SQL to run.", el.sql); return; }
    hideError(); busy(true); setStatus("Running…");
    const body = { sql };
    const qid = el.questionId.value.trim();
    if (qid) body.question_id = qid;
    try {
      const r = await api("v1/run", body);
      renderResult(r, r.matched, r.match_summary, r.chart);
      setStatus(r.ok ? "Done." : "The statement was not run.");
    } catch (e) {
      setStatus(""); showError(e.message, e.focus);
    } finally { busy(false); }
  }

  // vote sends a verdict on the SQL shown for the question asked: an
  // up-vote makes it a verified example (a reviewer's) or proposes it for
  // review (anyone else's), a down-vote flags it.
  async function vote(verdict) {
    const question = el.question.value.trim(), sql = el.sql.value.trim();
    if (!question || !sql) { showError("Ask a question and get SQL first.", el.question); return; }
    hideError(); busy(true); el.feedbackStatus.textContent = "Sending…";
    try {
      const r = await api("v1/feedback", { question, sql, verdict });
      el.feedbackStatus.textContent = verdict === "up" && r.status === "pending"
        ? "Thanks: example " + r.example_id + " waits for a reviewer; until then it answers only your questions."
        : verdict === "up"
        ? (r.added ? "Thanks: saved as verified example " : "Thanks: verified example updated, ") + r.example_id + "."
        : "Thanks: recorded" + (r.flagged && r.flagged.length ? "; flagged for review: " + r.flagged.join(", ") : "") + ".";
    } catch (e) {
      el.feedbackStatus.textContent = "";
      showError(e.message, e.focus);
    } finally { busy(false); }
  }
  el.voteUp.addEventListener("click", () => vote("up"));
  el.voteDown.addEventListener("click", () => vote("down"));

  const ctrlEnter = (f) => (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); f(); }
  };
  el.generate.addEventListener("click", generate);
  el.ask.addEventListener("click", ask);
  el.run.addEventListener("click", run);
  el.question.addEventListener("keydown", ctrlEnter(generate));
  el.sql.addEventListener("keydown", ctrlEnter(run));

  // /health describes the deployment only to an authenticated caller.
  function showHealth() {
    const token = el.token.value.trim();
    const headers = token ? { "Authorization": "Bearer " + token } : {};
    fetch("health", { headers }).then((r) => r.json()).then((h) => {
      if (!("auth" in h)) {
        el.health.textContent = "Service " + h.status + ". Enter your access token to see what it runs.";
        return;
      }
      const parts = [];
      if (h.dialect) parts.push("Dialect " + h.dialect);
      parts.push(h.models && h.models.length ? "model " + h.models.join(", ") : "no model configured: only verified examples are answered");
      if (h.index && h.index.documents) parts.push(h.index.documents + " knowledge documents");
      el.health.textContent = parts.join(" · ");
      if (h.auth === "none") el.token.placeholder = "not needed: authentication is off";
    }).catch(() => { el.health.textContent = "The service does not answer /health."; });
  }
  el.token.addEventListener("change", showHealth);
  showHealth();
})();
