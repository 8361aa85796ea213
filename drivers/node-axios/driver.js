#!/usr/bin/env node
// authmock driver (stdio, protocol version 1) for axios in Node.js, running
// the very recipe the browser page runs: ../browser/axios-interceptor.js
// (axios's response-interceptor refresh, as axios/axios#450 and tutorials
// write it). Only the transport differs: JSON lines on stdin and stdout
// instead of the attach WebSocket, and axios's Node http adapter instead of
// the browser's XMLHttpRequest. axios comes from Debian's node-axios.
"use strict";
const path = require("path");
const readline = require("readline");

module.paths.push("/usr/share/nodejs");
globalThis.axios = require("axios");

// What the recipe file calls: serve one case on stdin and stdout.
globalThis.AuthmockAttach = {
  run(recipe) {
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
          client = await recipe.makeClient(message);
          send({ id, ok: true, driver: "node-axios", version: `${axios.VERSION} (Debian)`, profiles: recipe.profiles, capabilities: recipe.capabilities });
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
  },
};

require(path.join(__dirname, "..", "browser", "axios-interceptor.js"));
