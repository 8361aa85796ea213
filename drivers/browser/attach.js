// authmock's attach transport for browsers: connects to `authmock run
// --attach` and speaks the driver protocol (version 1, docs/driver-protocol.md)
// over a WebSocket, one JSON message per text frame, case after case.
// A page includes this file and calls
//   AuthmockAttach.run({name, version, profiles, capabilities, makeClient})
// where makeClient(hello) returns {login(username, password), request(call)}
// whose promises resolve to {outcome, status?, body?, message?}.
// The page's `?connections=N` serves N cases at once, each connection with
// clients of its own (as DriverKit's `Driver.attach(connections:)`): a page
// runs a case at a time otherwise.
"use strict";
const AuthmockAttach = (() => {
  const log = (text) => {
    const line = `${new Date().toISOString().slice(11, 23)} ${text}`;
    const pre = document.getElementById("log");
    if (pre) pre.textContent = (pre.textContent + line + "\n").slice(-20000);
    console.log(line);
  };

  function serve(url, driver, onRunOver) {
    const socket = new WebSocket(url);
    let client = null;
    let inFlight = new Set();
    const send = (message) => {
      if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
    };
    const answer = (id, result) => {
      const message = { id, ok: result.outcome === "ok", outcome: result.outcome };
      if (result.status !== undefined) message.status = result.status;
      if (result.body !== undefined) message.body = result.body;
      if (result.message !== undefined) message.message = result.message;
      send(message);
    };
    const track = (promise) => {
      inFlight.add(promise);
      promise.finally(() => inFlight.delete(promise));
    };
    socket.onopen = () => log(`attached to ${url}`);
    socket.onmessage = async (event) => {
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        log(`ignoring a frame that is not JSON: ${String(event.data).slice(0, 200)}`);
        return;
      }
      const { id, op } = message;
      switch (op) {
        case "hello":
          try {
            client = await driver.makeClient({
              baseURL: message.baseURL, profile: message.profile,
              clientId: message.clientId, clientSecret: message.clientSecret,
            });
            log(`case on ${message.baseURL} (${message.profile})`);
            send({ id, ok: true, driver: driver.name, version: driver.version, profiles: driver.profiles, capabilities: driver.capabilities || [] });
          } catch (error) {
            send({ id, ok: false, message: `cannot create the client: ${error}` });
          }
          break;
        case "login":
        case "request":
        case "logout": {
          if (!client || (op === "logout" && !client.logout)) {
            send({ id, ok: false, outcome: "unsupported", message: `${op} is not supported here` });
            break;
          }
          const work = (op === "login" ? client.login(message.username, message.password)
            : op === "logout" ? client.logout() : client.request(message))
            .catch((error) => ({ outcome: "transport_error", message: String(error) }))
            .then((result) => answer(id, result));
          track(work);
          break;
        }
        case "shutdown":
          await Promise.allSettled([...inFlight]);
          client = null;
          send({ id, ok: true });
          break;
        default:
          send({ id, ok: false, outcome: "unsupported", message: `unknown op ${op}` });
      }
    };
    socket.onclose = (event) => {
      if (event.code === 1000) {
        log(`the run is over: ${event.reason}`);
        onRunOver();
      } else {
        // The runner closes after a case that ended in ERROR: come back for the next one.
        log(`connection closed (${event.code} ${event.reason}); reconnecting`);
        setTimeout(() => serve(url, driver, onRunOver), 300);
      }
    };
  }

  return {
    log,
    run(driver) {
      const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/attach`;
      const connections = Math.max(1, Math.min(16, Number(new URLSearchParams(location.search).get("connections")) || 1));
      document.title = `authmock: ${driver.name} running`;
      let open = connections;
      for (let i = 0; i < connections; i++) {
        serve(url, driver, () => {
          if (--open === 0) document.title = `authmock: ${driver.name} done`;
        });
      }
    },
  };
})();
