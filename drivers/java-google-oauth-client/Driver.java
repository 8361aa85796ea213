// authmock driver for the Google OAuth Client Library for Java (Debian's
// libgoogle-oauth-client-java).
//
// Recipe, from the library's developer guide ("OAuth 2.0 and the Google OAuth
// Client Library for Java", section "Credential and credential store"): one
// Credential built with BearerToken.authorizationHeaderAccessMethod(), the
// transport, a JSON factory, the token server URL and client authentication,
// used as the HttpRequestInitializer of every request. The Credential
// refreshes by itself: before a request when the token expires within a
// minute, and, as the request's unsuccessful-response handler, on a 401
// (under its lock, skipping the refresh when another thread already replaced
// the token the request carried). A refused refresh reaches the application
// through the CredentialRefreshListener it registers, or as the
// TokenResponseException the library throws when the refresh happened before
// sending: either means sign in again. Sign-in is the library's
// PasswordTokenRequest.
import com.google.api.client.auth.oauth2.BearerToken;
import com.google.api.client.auth.oauth2.ClientParametersAuthentication;
import com.google.api.client.auth.oauth2.Credential;
import com.google.api.client.auth.oauth2.CredentialRefreshListener;
import com.google.api.client.auth.oauth2.PasswordTokenRequest;
import com.google.api.client.auth.oauth2.TokenErrorResponse;
import com.google.api.client.auth.oauth2.TokenResponse;
import com.google.api.client.auth.oauth2.TokenResponseException;
import com.google.api.client.http.BasicAuthentication;
import com.google.api.client.http.ByteArrayContent;
import com.google.api.client.http.GenericUrl;
import com.google.api.client.http.HttpRequest;
import com.google.api.client.http.HttpResponse;
import com.google.api.client.http.javanet.NetHttpTransport;
import com.google.api.client.json.gson.GsonFactory;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;

public final class Driver {
    static final NetHttpTransport transport = new NetHttpTransport();
    static final GsonFactory json = GsonFactory.getDefaultInstance();
    static String base;
    static BasicAuthentication client;
    static Credential credential;
    /** Set by the refresh listener when the token server refused a refresh. */
    static volatile boolean refused;

    static void hello(JsonObject m) {
        base = m.get("baseURL").getAsString();
        client = new BasicAuthentication(m.get("clientId").getAsString(), m.get("clientSecret").getAsString());
        credential = new Credential.Builder(BearerToken.authorizationHeaderAccessMethod())
            .setTransport(transport).setJsonFactory(json).setTokenServerEncodedUrl(base + "/oauth/token").setClientAuthentication(client)
            .addRefreshListener(new CredentialRefreshListener() {
                public void onTokenResponse(Credential credential, TokenResponse response) {}

                public void onTokenErrorResponse(Credential credential, TokenErrorResponse error) {
                    if (error != null) refused = true; // an OAuth 2.0 error answer, not a server that is down
                }
            })
            .build();
    }

    static JsonObject login(JsonObject m) throws IOException {
        try {
            TokenResponse tokens = new PasswordTokenRequest(transport, json, new GenericUrl(base + "/oauth/token"),
                m.get("username").getAsString(), m.get("password").getAsString()).setClientAuthentication(client).execute();
            credential.setFromTokenResponse(tokens);
            refused = false;
            return StdioDriver.outcome("ok");
        } catch (TokenResponseException e) {
            JsonObject result = StdioDriver.outcome("http_error");
            result.addProperty("status", e.getStatusCode());
            return result;
        }
    }

    static JsonObject request(JsonObject m) throws IOException {
        String path = m.has("url") ? m.get("url").getAsString() : base + m.get("path").getAsString();
        String method = m.get("method").getAsString();
        ByteArrayContent body = m.has("body") && !m.get("body").isJsonNull()
            ? new ByteArrayContent(null, m.get("body").getAsString().getBytes(StandardCharsets.UTF_8)) : null;
        HttpRequest request = transport.createRequestFactory(credential).buildRequest(method, new GenericUrl(path), body);
        if (m.has("headers")) {
            for (Map.Entry<String, JsonElement> header : m.getAsJsonObject("headers").entrySet()) {
                request.getHeaders().set(header.getKey(), header.getValue().getAsString());
            }
        }
        request.setThrowExceptionOnExecuteError(false);
        HttpResponse response;
        try {
            response = request.execute();
        } catch (TokenResponseException e) {
            // The refresh before sending (a token known to be expired) failed, and
            // the library throws the token server's answer to the caller. A 4xx
            // other than 429 refused the refresh token; a 5xx or a 429 refused
            // nothing, and the call was never sent (the protocol's refresh_failed).
            int status = e.getStatusCode();
            boolean refusedToken = status / 100 == 4 && status != 429;
            JsonObject result = StdioDriver.outcome(refusedToken ? "reauth_required" : "refresh_failed");
            result.addProperty("status", status);
            result.addProperty("message", e.getMessage());
            return result;
        }
        try {
            int status = response.getStatusCode();
            JsonObject result = StdioDriver.outcome(status / 100 == 2 ? "ok" : status == 401 && refused ? "reauth_required" : "http_error");
            result.addProperty("status", status);
            result.addProperty("body", response.parseAsString());
            return result;
        } finally {
            response.disconnect();
        }
    }

    public static void main(String[] args) throws Exception {
        StdioDriver.run("google-oauth-client", "1.34.1 (Debian)", Driver::hello, Driver::login, Driver::request);
    }
}
