#!/usr/bin/env node
// authmock driver (stdio, protocol version 1) for axios in Node.js, running
// the very recipe the browser page runs: ../browser/axios-interceptor.js
// (axios's response-interceptor refresh, as axios/axios#450 and tutorials
// write it). Only the transport differs: JSON lines on stdin and stdout
// instead of the attach WebSocket, and axios's Node http adapter instead of
// the browser's XMLHttpRequest. axios comes from Debian's node-axios.
"use strict";
const path = require("path");
const stdio = require(path.join(__dirname, "..", "node-common", "stdio.js"));

stdio.useDebianModules();
globalThis.axios = require("axios");

// What the recipe file calls: serve one case on stdin and stdout.
globalThis.AuthmockAttach = {
  run(recipe) {
    stdio.serve({ ...recipe, name: "node-axios", version: `${axios.VERSION} (Debian)` });
  },
};

require(path.join(__dirname, "..", "browser", "axios-interceptor.js"));
