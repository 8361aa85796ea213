// authmock driver for OkHttp 3 with an Authenticator.
//
// Recipe, as OkHttp's documentation ("Handling authentication") and the
// common Retrofit answers write it: an interceptor adds the bearer token to
// every request; an Authenticator, called by OkHttp on a 401, refreshes the
// token under a lock (skipping the refresh when another call already
// replaced the token the failed request carried), gives up after one retry,
// and returns the request with the new token. The refresh call uses a
// separate client without the Authenticator, so its own 401 cannot recurse.
// The `cancel` extension is OkHttp's `Call.cancel()` on the app's call.
import com.google.gson.Gson;
import com.google.gson.JsonObject;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import okhttp3.*;

public final class Driver {
    static final Gson gson = new Gson();
    static final Object tokenLock = new Object();
    static volatile String access, refresh;
    static volatile boolean signedOut;
    static String base, basic;
    static final OkHttpClient plain = new OkHttpClient();
    static OkHttpClient client;
    /** The app's calls in flight, by the runner's message id: what `cancel` reaches. */
    static final Map<String, Call> calls = new ConcurrentHashMap<>();
    /** Ids a `cancel` named, which a call registered just after it still meets. */
    static final java.util.Set<String> cancelRequested = ConcurrentHashMap.newKeySet();

    /** The token grant; true when new tokens are in place. Caller holds tokenLock. */
    static boolean grant(FormBody form) throws Exception {
        Request request = new Request.Builder().url(base + "/oauth/token").header("Authorization", basic).post(form).build();
        try (Response response = plain.newCall(request).execute()) {
            if (response.code() != 200) return false;
            JsonObject tokens = gson.fromJson(response.body().string(), JsonObject.class);
            access = tokens.get("access_token").getAsString();
            if (tokens.has("refresh_token")) refresh = tokens.get("refresh_token").getAsString();
            return true;
        }
    }

    static int priorResponses(Response response) {
        int count = 1;
        while ((response = response.priorResponse()) != null) count++;
        return count;
    }

    static void hello(JsonObject m) {
        base = m.get("baseURL").getAsString();
        basic = Credentials.basic(m.get("clientId").getAsString(), m.get("clientSecret").getAsString());
        client = new OkHttpClient.Builder()
            .addInterceptor(chain -> {
                Request request = chain.request();
                boolean ours = request.url().toString().startsWith(base + "/");
                if (!ours || request.header("Authorization") != null || access == null) return chain.proceed(request);
                return chain.proceed(request.newBuilder().header("Authorization", "Bearer " + access).build());
            })
            .authenticator((route, response) -> {
                if (priorResponses(response) >= 2) return null; // one retry per call
                String used = response.request().header("Authorization");
                synchronized (tokenLock) {
                    // Another call refreshed while this one was out: just retry with the new token.
                    if (used != null && !used.equals("Bearer " + access)) {
                        return response.request().newBuilder().header("Authorization", "Bearer " + access).build();
                    }
                    try {
                        if (signedOut || refresh == null || !grant(new FormBody.Builder().add("grant_type", "refresh_token").add("refresh_token", refresh).build())) {
                            signedOut = true;
                            return null;
                        }
                    } catch (Exception e) {
                        return null;
                    }
                    return response.request().newBuilder().header("Authorization", "Bearer " + access).build();
                }
            })
            .readTimeout(30, TimeUnit.SECONDS)
            .build();
        client.dispatcher().setMaxRequestsPerHost(256);
    }

    static JsonObject login(JsonObject m) throws Exception {
        JsonObject result = new JsonObject();
        boolean ok;
        synchronized (tokenLock) {
            ok = grant(new FormBody.Builder().add("grant_type", "password")
                .add("username", m.get("username").getAsString()).add("password", m.get("password").getAsString()).build());
            signedOut = !ok;
        }
        result.addProperty("ok", ok);
        result.addProperty("outcome", ok ? "ok" : "http_error");
        return result;
    }

    static JsonObject request(JsonObject m) throws Exception {
        // `url` (the url capability): a request to another host; otherwise a path on the server.
        String path = m.has("url") ? m.get("url").getAsString() : m.get("path").getAsString();
        String method = m.get("method").getAsString();
        RequestBody body = m.has("body") && !m.get("body").isJsonNull()
            ? RequestBody.create(null, m.get("body").getAsString().getBytes("UTF-8"))
            : (okhttp3.internal.http.HttpMethod.requiresRequestBody(method) ? RequestBody.create(null, new byte[0]) : null);
        Request.Builder builder = new Request.Builder().url(path.startsWith("http") ? path : base + path).method(method, body);
        if (m.has("headers")) {
            for (Map.Entry<String, com.google.gson.JsonElement> header : m.getAsJsonObject("headers").entrySet()) {
                builder.header(header.getKey(), header.getValue().getAsString());
            }
        }
        JsonObject result = new JsonObject();
        String id = m.get("id").getAsString();
        Call call = client.newCall(builder.build());
        calls.put(id, call);
        if (cancelRequested.remove(id)) call.cancel();
        try (Response response = call.execute()) {
            int status = response.code();
            boolean ok = status >= 200 && status < 300;
            // The app's glue: a 401 after a refused refresh means "sign in again".
            String outcome = ok ? "ok" : (status == 401 && signedOut ? "reauth_required" : "http_error");
            result.addProperty("ok", ok);
            result.addProperty("outcome", outcome);
            result.addProperty("status", status);
            result.addProperty("body", response.body().string());
        } catch (java.io.IOException e) {
            result.addProperty("ok", false);
            // OkHttp reports a cancelled call as an IOException ("Canceled").
            result.addProperty("outcome", call.isCanceled() ? "cancelled" : "transport_error");
            result.addProperty("message", e.toString());
        } finally {
            calls.remove(id);
        }
        return result;
    }

    public static void main(String[] args) throws Exception {
        StdioDriver.run("okhttp-authenticator", "3.13.1 (Debian)", Driver::hello, Driver::login, Driver::request, id -> {
            cancelRequested.add(id);
            Call call = calls.get(id);
            if (call == null) return false;
            cancelRequested.remove(id);
            call.cancel();
            return true;
        });
    }
}
