/// `GET /_authmock/console`: one page, no build step, no library. It draws
/// the traffic with the run report's time line (`GET /_authmock/timeline`,
/// drawn by the suite), shows the verdicts so far (`GET
/// /_authmock/verdicts`, with `--judge`), and has a button for each thing a
/// developer does by hand today: expire the tokens now, move the clock,
/// revoke the login, lose, fail or delay the next refresh, hold the next
/// calls so they meet one expiry together. Each button is one control API
/// request, shown beside it; a server-sent event (`GET /_authmock/events`)
/// redraws the page when a request has been recorded.
enum ConsolePage {
    static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <title>authmock console</title>
        <!-- No icon to fetch: a request for /favicon.ico would reach the backend and the journal as the app's. -->
        <link rel="icon" href="data:,">
        <style>
          body { font: 14px/1.4 system-ui, sans-serif; margin: 1.2em; color: #222; }
          h1 { font-size: 1.3em; margin: 0 0 .4em; }
          .bar { display: flex; flex-wrap: wrap; gap: .4em; align-items: center; margin: .6em 0; }
          button { font: inherit; padding: .3em .7em; border: 1px solid #888; border-radius: 4px; background: #f4f4f4; cursor: pointer; }
          button:hover { background: #e6e6e6; }
          #verdict { font-weight: bold; padding: .2em .6em; border-radius: 4px; }
          #verdict[data-verdict="pass"] { background: #d4f0d4; }
          #verdict[data-verdict="fail"] { background: #f8d4d4; }
          #verdict[data-verdict="nothing-yet"], #verdict[data-verdict="off"] { background: #eee; }
          #status { color: #555; font-family: ui-monospace, Menlo, monospace; font-size: 12px; }
          #timeline { overflow-x: auto; border: 1px solid #ddd; padding: .3em; min-height: 3em; }
          .finding { margin: .2em 0; }
          .finding[data-passed="false"] { color: #a00; }
          pre { white-space: pre-wrap; font-size: 12px; margin: .1em 0 .4em 1em; }
          #faults li { font-family: ui-monospace, Menlo, monospace; font-size: 12px; }
        </style>
        </head>
        <body data-ready="0">
        <h1>authmock console</h1>
        <div class="bar">
          <span>verdict: <span id="verdict" data-verdict="">…</span></span>
          <span id="clock"></span>
        </div>
        <div class="bar">
          <button data-action="expire-access">Expire access tokens now</button>
          <button data-action="advance-60">Advance the clock 60 s</button>
          <button data-action="revoke-login">Revoke the logins</button>
          <button data-action="lose-refresh">Lose the next refresh</button>
          <button data-action="fail-refresh">Fail the next refresh (503, Retry-After 2)</button>
          <button data-action="delay-refresh">Delay the next refresh 2 s</button>
          <button data-action="hold-calls">Hold the next</button>
          <input id="hold-count" type="number" min="2" max="100" value="3" style="width: 4em"> calls
          <button data-action="clear-faults">Clear faults</button>
        </div>
        <div id="status"></div>
        <h2>Time line</h2>
        <div id="timeline"></div>
        <h2>Verdicts</h2>
        <div id="causes"></div>
        <div id="findings"></div>
        <h2>Fault rules</h2>
        <ul id="faults"></ul>
        <script>
        "use strict";
        const api = "/_authmock";
        const refreshKind = { kind: "refresh" };
        const actions = {
          "expire-access": ["POST", "/tokens/expire", { kind: "access" }],
          "advance-60": ["POST", "/clock/advance", { seconds: 60 }],
          "revoke-login": ["POST", "/tokens/revoke", { kind: "all" }],
          "lose-refresh": ["POST", "/faults", { match: refreshKind, times: 1, action: { type: "drop-response" } }],
          "fail-refresh": ["POST", "/faults", { match: refreshKind, times: 1, action: { type: "respond", status: 503, headers: { "Retry-After": "2" } } }],
          "delay-refresh": ["POST", "/faults", { match: refreshKind, times: 1, action: { type: "delay", ms: 2000 } }],
          "hold-calls": ["POST", "/faults", null],
          "clear-faults": ["DELETE", "/faults", null],
        };
        function text(node, value) { node.textContent = value; return node; }
        function element(tag, attributes, content) {
          const node = document.createElement(tag);
          for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, value);
          if (content !== undefined) text(node, content);
          return node;
        }
        async function call(method, path, body) {
          const init = { method, headers: {} };
          if (body) { init.headers["Content-Type"] = "application/json"; init.body = JSON.stringify(body); }
          const response = await fetch(api + path, init);
          const answer = await response.text();
          return { status: response.status, answer };
        }
        async function act(name) {
          let [method, path, body] = actions[name];
          if (name === "hold-calls") {
            const count = Math.max(2, Math.min(100, Number(document.getElementById("hold-count").value) || 3));
            body = { match: { kind: "resource" }, times: count, action: { type: "gather", count, ms: 10000 } };
          }
          const { status, answer } = await call(method, path, body);
          const said = text(document.getElementById("status"), `${method} ${api}${path} -> ${status} ${answer}`);
          said.dataset.action = name;
          said.dataset.status = String(status);
          await update();
        }
        async function refresh() {
          const timeline = await call("GET", "/timeline");
          document.getElementById("timeline").innerHTML = timeline.status === 200 ? timeline.answer : "";
          const verdicts = await call("GET", "/verdicts");
          const badge = document.getElementById("verdict");
          const causes = document.getElementById("causes");
          const findings = document.getElementById("findings");
          causes.replaceChildren();
          findings.replaceChildren();
          if (verdicts.status === 200) {
            const v = JSON.parse(verdicts.answer);
            badge.dataset.verdict = v.verdict;
            text(badge, `${v.verdict.toUpperCase()} (${v.requests} requests, ${v.logins} login${v.logins === 1 ? "" : "s"})`);
            for (const cause of v.causes) causes.append(element("p", { "data-cause": cause.id }, `cause: ${cause.title}`));
            for (const finding of v.findings) {
              const row = element("div", { class: "finding", "data-expectation": finding.expectation, "data-passed": String(finding.passed) });
              row.append(element("b", {}, finding.expectation), document.createTextNode(`: ${finding.message}`));
              if (!finding.passed && finding.evidence.length) row.append(element("pre", {}, finding.evidence.join("\n")));
              findings.append(row);
            }
          } else {
            badge.dataset.verdict = "off";
            text(badge, "not judged (start the server with --judge)");
          }
          const faults = await call("GET", "/faults");
          const list = document.getElementById("faults");
          list.replaceChildren();
          if (faults.status === 200) {
            for (const rule of JSON.parse(faults.answer)) {
              list.append(element("li", { "data-fault": String(rule.id) }, `#${rule.id} ${JSON.stringify(rule.match)} ${JSON.stringify(rule.action)} fired ${rule.fired}${rule.exhausted ? " (done)" : ""}`));
            }
          }
          const clock = await call("GET", "/clock");
          if (clock.status === 200) {
            const c = JSON.parse(clock.answer);
            text(document.getElementById("clock"), `clock: ${c.now} (${c.offsetSeconds >= 0 ? "+" : ""}${c.offsetSeconds} s)`);
          }
          document.body.dataset.ready = "1";
        }
        for (const button of document.querySelectorAll("button[data-action]")) {
          button.addEventListener("click", () => act(button.dataset.action));
        }
        // One redraw at a time; an event during one asks for another after it.
        let running = false, again = false;
        async function update() {
          if (running) { again = true; return; }
          running = true;
          try { do { again = false; await refresh(); } while (again); } finally { running = false; }
        }
        new EventSource(api + "/events").addEventListener("journal", update);
        update();
        </script>
        </body>
        </html>
        """#
}
