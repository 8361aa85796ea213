// The driver side of authmock's stdio protocol (version 1), for Node.js
// drivers: JSON lines on stdin and stdout, calls answered concurrently, each
// id once, `shutdown` answered after every call. A driver passes
// {name, version, profiles, capabilities, makeClient}; makeClient(hello)
// returns {login(username, password), request(call)} whose promises resolve
// to {outcome, status?, body?, message?} (the browser recipes' shape).
"use strict";
const readline = require("readline");

exports.serve = function serve(driver) {
  // The runner gone (its end of the pipe closed): leave quietly, as at the end
  // of stdin, not with an unhandled EPIPE and a stack trace.
  process.stdout.on("error", (error) => process.exit(error.code === "EPIPE" ? 0 : 1));
  const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");
  const inFlight = new Set();
  let client = null;
  const lines = readline.createInterface({ input: process.stdin });
  lines.on("line", async (line) => {
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      return; // the runner only sends JSON; nothing to answer
    }
    const { id, op } = message;
    if (op === "hello") {
      try {
        client = await driver.makeClient(message);
        send({ id, ok: true, driver: driver.name, version: driver.version, profiles: driver.profiles, capabilities: driver.capabilities || [] });
      } catch (error) {
        send({ id, ok: false, message: `cannot create the client: ${error}` });
      }
    } else if ((op === "login" || op === "request") && client) {
      const work = (op === "login" ? client.login(message.username, message.password) : client.request(message))
        .catch((error) => ({ outcome: "transport_error", message: String(error) }))
        .then((result) => send({ id, ok: result.outcome === "ok", ...result }));
      inFlight.add(work);
      work.finally(() => inFlight.delete(work));
    } else if (op === "shutdown") {
      await Promise.allSettled([...inFlight]);
      send({ id, ok: true });
      lines.close();
      process.exit(0);
    } else {
      send({ id, ok: false, outcome: "unsupported", message: `${op} is not supported` });
    }
  });
};

// Debian installs Node modules in /usr/share/nodejs; a Node.js that is not
// Debian's does not look there, for a module's own dependencies either.
exports.useDebianModules = function useDebianModules() {
  process.env.NODE_PATH = ["/usr/share/nodejs", process.env.NODE_PATH].filter(Boolean).join(":");
  require("module").Module._initPaths();
};
