#!/usr/bin/env node
// authmock driver (stdio, protocol version 1) for got (Debian's node-got),
// with the refresh recipe of got's own README (hooks.afterResponse): an
// instance made with `got.extend({hooks: {afterResponse: [...]},
// mutableDefaults: true})` whose hook, on a 401, gets a new token, saves it
// in the instance's defaults "for further requests", and retries with
// `retryWithMergedOptions`. The README leaves `getNewToken()` to the app;
// here it is the refresh grant sent with plain `got` (not the instance, so
// the refresh's own answer does not run the hook), and a refused refresh
// throws, which the app turns into "sign in again". got's defaults stay
// (its retry of GETs on 5xx and 429, HTTP errors as exceptions).
"use strict";
const path = require("path");
const stdio = require(path.join(__dirname, "..", "node-common", "stdio.js"));

stdio.useDebianModules();
const got = require("got");
const version = require("got/package.json").version;

// got wraps what a hook throws in its own RequestError, keeping the `code`:
// the app tells "sign in again" apart by it.
class ReauthRequired extends Error {
  code = "ERR_REAUTH_REQUIRED";
}

function makeClient(hello) {
  const tokenURL = `${hello.baseURL}/oauth/token`;
  const basic = "Basic " + Buffer.from(`${hello.clientId}:${hello.clientSecret}`).toString("base64");
  let refreshToken = null;

  async function grant(form) {
    const response = await got.post(tokenURL, { form, headers: { authorization: basic }, throwHttpErrors: false, responseType: "json" });
    if (response.statusCode === 400 || response.statusCode === 401) throw new ReauthRequired(`refresh refused (${response.statusCode})`);
    if (response.statusCode !== 200) throw new Error(`token endpoint answered ${response.statusCode}`);
    if (response.body.refresh_token) refreshToken = response.body.refresh_token;
    return response.body.access_token;
  }

  // The README's getNewToken().
  const getNewToken = () => grant({ grant_type: "refresh_token", refresh_token: refreshToken });

  const instance = got.extend({
    hooks: {
      afterResponse: [
        async (response, retryWithMergedOptions) => {
          if (response.statusCode === 401) { // Unauthorized
            const updatedOptions = { headers: { authorization: `Bearer ${await getNewToken()}` } };
            // Save for further requests
            instance.defaults.options = got.mergeOptions(instance.defaults.options, updatedOptions);
            // Make a new retry
            return retryWithMergedOptions(updatedOptions);
          }
          // No changes otherwise
          return response;
        },
      ],
    },
    mutableDefaults: true,
  });

  return {
    async login(username, password) {
      try {
        const access = await grant({ grant_type: "password", username, password });
        instance.defaults.options = got.mergeOptions(instance.defaults.options, { headers: { authorization: `Bearer ${access}` } });
        return { outcome: "ok" };
      } catch (error) {
        return { outcome: "http_error", message: String(error) };
      }
    },
    async request(call) {
      const url = call.url || `${hello.baseURL}${call.path}`;
      try {
        const response = await instance(url, { method: call.method, headers: call.headers || {}, body: call.body == null ? undefined : call.body });
        return { outcome: "ok", status: response.statusCode, body: response.body };
      } catch (error) {
        if (error.code === "ERR_REAUTH_REQUIRED") return { outcome: "reauth_required", message: error.message };
        if (error instanceof got.HTTPError) return { outcome: "http_error", status: error.response.statusCode, body: error.response.body };
        return { outcome: "transport_error", message: String(error) };
      }
    },
  };
}

stdio.serve({ name: "node-got", version: `${version} (Debian)`, profiles: ["oauth2"], capabilities: ["url"], makeClient });
