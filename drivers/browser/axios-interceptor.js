// axios with the response-interceptor refresh recipe as tutorials and the
// axios interceptor docs shape it: a request interceptor adds the token, a
// response interceptor catches a 401, marks the request `_retry`, refreshes
// and replays it once. No single flight: concurrent 401s each refresh
// (that is the recipe as written; the suite says what it costs).
// axios itself is not bundled: the page loads its browser build from
// /assets/axios.min.js (authmock run --attach --assets DIR, e.g. Debian's
// node-axios: /usr/share/nodejs/axios/dist).
"use strict";
AuthmockAttach.run({
  name: "browser-axios",
  version: typeof axios === "undefined" ? "not loaded" : `axios ${axios.VERSION}`,
  profiles: ["oauth2"],
  capabilities: ["url"],
  makeClient(hello) {
    if (typeof axios === "undefined") {
      throw new Error("axios is not loaded: run authmock run --attach --assets DIR, with axios.min.js in DIR");
    }
    const tokens = { access: null, refresh: null };
    const api = axios.create({ baseURL: hello.baseURL, validateStatus: (status) => status >= 200 && status < 300 });
    const apiOrigin = new URL(hello.baseURL).origin;
    const basic = "Basic " + btoa(`${hello.clientId}:${hello.clientSecret}`);
    const grant = async (fields) => {
      const response = await axios.post(`${hello.baseURL}/oauth/token`, new URLSearchParams(fields), { headers: { Authorization: basic } });
      tokens.access = response.data.access_token;
      if (response.data.refresh_token) tokens.refresh = response.data.refresh_token;
      return response;
    };
    api.interceptors.request.use((config) => {
      if (tokens.access && new URL(config.url, hello.baseURL).origin === apiOrigin) config.headers.Authorization = `Bearer ${tokens.access}`;
      return config;
    });
    api.interceptors.response.use(
      (response) => response,
      async (error) => {
        const original = error.config;
        if (error.response?.status === 401 && !original._retry) {
          original._retry = true;
          try {
            await grant({ grant_type: "refresh_token", refresh_token: tokens.refresh });
          } catch (refreshError) {
            if ([400, 401].includes(refreshError.response?.status)) {
              refreshError.reauth = true;
            }
            return Promise.reject(refreshError);
          }
          return api(original);
        }
        return Promise.reject(error);
      },
    );
    const settle = async (promise) => {
      try {
        const response = await promise;
        return { outcome: "ok", status: response.status, body: typeof response.data === "string" ? response.data : JSON.stringify(response.data) };
      } catch (error) {
        if (error.reauth) return { outcome: "reauth_required", status: error.response?.status, message: "refresh refused" };
        if (error.response) {
          const data = error.response.data;
          return { outcome: "http_error", status: error.response.status, body: typeof data === "string" ? data : JSON.stringify(data) };
        }
        return { outcome: "transport_error", message: String(error.message ?? error) };
      }
    };
    return {
      login: (username, password) => settle(grant({ grant_type: "password", username, password })),
      request: (call) =>
        settle(api.request({ url: call.url ?? call.path, method: call.method, headers: call.headers, data: call.body, transformResponse: [(data) => data] })),
    };
  },
});
