// A refresh interceptor around window.fetch, written the way web apps write
// it: the access token in memory, Authorization added to calls to the API's
// own origin, and on a 401 one shared refresh (concurrent 401s wait for the
// same promise), then the call retried once with the new token. A refused
// refresh means the user must sign in again: the tokens are dropped, and
// later 401s go straight to the sign-in screen.
"use strict";
class ReauthRequired extends Error {}

function createAuthFetch({ baseURL, clientId, clientSecret }) {
  const tokenURL = `${baseURL}/oauth/token`;
  const apiOrigin = new URL(baseURL).origin;
  let accessToken = null;
  let refreshToken = null;
  let refreshing = null;

  async function grant(fields) {
    const response = await fetch(tokenURL, {
      method: "POST",
      headers: {
        "Content-Type": "application/x-www-form-urlencoded",
        Authorization: "Basic " + btoa(`${clientId}:${clientSecret}`),
      },
      body: new URLSearchParams(fields),
    });
    if (!response.ok) return response;
    const tokens = await response.clone().json();
    accessToken = tokens.access_token;
    if (tokens.refresh_token) refreshToken = tokens.refresh_token;
    return response;
  }

  function refresh() {
    // One refresh at a time: every 401 that arrives meanwhile awaits it.
    refreshing ??= (async () => {
      try {
        const response = await grant({ grant_type: "refresh_token", refresh_token: refreshToken });
        if (response.status === 400 || response.status === 401) {
          accessToken = refreshToken = null;
          throw new ReauthRequired(`refresh refused (${response.status})`);
        }
        if (!response.ok) throw new Error(`refresh failed (${response.status})`);
      } finally {
        refreshing = null;
      }
    })();
    return refreshing;
  }

  async function authFetch(url, init = {}) {
    const send = () => {
      const headers = new Headers(init.headers);
      if (new URL(url, baseURL).origin === apiOrigin && accessToken) headers.set("Authorization", `Bearer ${accessToken}`);
      return fetch(url, { ...init, headers });
    };
    const sentWith = accessToken;
    const response = await send();
    if (response.status !== 401 || new URL(url, baseURL).origin !== apiOrigin) return response;
    if (!refreshToken && !refreshing) throw new ReauthRequired("signed out: sign in again");
    // Someone else may have refreshed while this call was out.
    if (accessToken === sentWith) await refresh();
    return send();
  }

  return {
    login: (username, password) => grant({ grant_type: "password", username, password }),
    fetch: authFetch,
  };
}

// The driver glue: the runner's calls through authFetch, outcomes as the app sees them.
AuthmockAttach.run({
  name: "browser-fetch",
  version: navigator.userAgent.match(/(?:Headless)?Chrome\/[\d.]+|Firefox\/[\d.]+|Version\/[\d.]+ Safari/)?.[0] ?? "browser",
  profiles: ["oauth2"],
  capabilities: ["url"],
  makeClient(hello) {
    const api = createAuthFetch(hello);
    const settle = async (promise) => {
      try {
        const response = await promise;
        const body = await response.text();
        return { outcome: response.ok ? "ok" : "http_error", status: response.status, body };
      } catch (error) {
        if (error instanceof ReauthRequired) return { outcome: "reauth_required", message: error.message };
        return { outcome: "transport_error", message: String(error) };
      }
    };
    return {
      login: (username, password) => settle(api.login(username, password)),
      request: (call) => settle(api.fetch(call.url ?? hello.baseURL + call.path, { method: call.method, headers: call.headers, body: call.body })),
    };
  },
});
