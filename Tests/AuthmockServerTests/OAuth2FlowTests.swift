import AuthmockCore
import AuthmockServer
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

/// The oauth2 dialect's happy paths, through HTTP.
struct OAuth2FlowTests {
    @Test func healthAnswersOnceListening() async throws {
        try await TestServer.run { server in
            let response = try await server.send(.get, "/health")
            #expect(response.status == .ok)
            #expect(try response.json()["status"] as? String == "ok")
        }
    }

    @Test func metadataNamesTheRealEndpoints() async throws {
        try await TestServer.run { server in
            for path in ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"] {
                let json = try await server.send(.get, path).json()
                let base = server.mock.baseURL
                #expect(json["issuer"] as? String == base)
                #expect(json["token_endpoint"] as? String == "\(base)/oauth/token")
                #expect(json["authorization_endpoint"] as? String == "\(base)/oauth/authorize")
                #expect(json["revocation_endpoint"] as? String == "\(base)/oauth/revoke")
                #expect(json["introspection_endpoint"] as? String == "\(base)/oauth/introspect")
                #expect(json["code_challenge_methods_supported"] as? [String] == ["S256"])
            }
        }
    }

    @Test func passwordGrantFollowsRFC6749Section5_1() async throws {
        try await TestServer.run { server in
            let response = try await server.form("/oauth/token", password)
            #expect(response.status == .ok)
            #expect(response.headers[.cacheControl] == "no-store")
            #expect(response.headers[.contentType] == "application/json")
            let json = try response.json()
            #expect(json["token_type"] as? String == "Bearer")
            #expect(json["expires_in"] as? Int == 300)
            #expect(json["scope"] as? String == "read write")
            #expect(json["refresh_token"] is String)
            #expect(json["access_token"] is String)
        }
    }

    @Test func clientSecretInTheBodyWorksToo() async throws {
        try await TestServer.run { server in
            let response = try await server.form("/oauth/token", password + [("client_id", "demo"), ("client_secret", "demo-secret")], basic: nil)
            #expect(response.status == .ok)
        }
    }

    @Test func meReturnsSubjectAndClaims() async throws {
        try await TestServer.run { server in
            let pair = try await server.login()
            let json = try await server.get("/api/me", bearer: pair.access).json()
            #expect(json["sub"] as? String == "alice")
            #expect(json["client_id"] as? String == "demo")
            let claims = try #require(json["claims"] as? [String: Any])
            #expect(claims["iss"] as? String == server.mock.baseURL)
            #expect(claims["aud"] as? [String] == ["authmock-api"])
        }
    }

    @Test func echoShowsWhatTheClientSent() async throws {
        try await TestServer.run { server in
            let pair = try await server.login()
            let response = try await server.send(
                .put, "/api/notes/7?draft=1",
                headers: [.authorization: "Bearer \(pair.access)", HTTPField.Name("X-Authmock-Call")!: "c-42", .contentType: "application/json"],
                body: #"{"text":"hi"}"#)
            #expect(response.status == .ok)
            let json = try response.json()
            #expect(json["method"] as? String == "PUT")
            #expect(json["path"] as? String == "/api/notes/7")
            #expect(json["query"] as? String == "draft=1")
            #expect(json["body"] as? String == #"{"text":"hi"}"#)
            #expect(json["call"] as? String == "c-42")
            #expect(json["sub"] as? String == "alice")
        }
    }

    @Test func refreshRotatesAndTheNewAccessTokenWorks() async throws {
        try await TestServer.run { server in
            let first = try await server.login()
            server.mock.clock.advance(seconds: 301)
            #expect(try await server.get("/api/me", bearer: first.access).status == .unauthorized)
            let refreshed = try TokenPair(try await server.refresh(first.refresh!))
            #expect(refreshed.refresh != nil && refreshed.refresh != first.refresh)
            #expect(try await server.get("/api/me", bearer: refreshed.access).status == .ok)
        }
    }

    @Test func clientCredentialsIssuesNoRefreshToken() async throws {
        try await TestServer.run { server in
            let response = try await server.form("/oauth/token", [("grant_type", "client_credentials"), ("scope", "read")])
            let json = try response.json()
            #expect(response.status == .ok)
            #expect(json["refresh_token"] == nil)
            let me = try await server.get("/api/me", bearer: json["access_token"] as? String).json()
            #expect(me["sub"] as? String == "demo")
        }
    }

    @Test func authorizationCodeWithPKCEEndToEnd() async throws {
        try await TestServer.run(errorTestOptions) { server in
            let code = try await authorizationCode(server, client: "mobile", redirect: "app://callback")
            // Public client: no secret, client_id in the body.
            let response = try await server.form(
                "/oauth/token",
                [
                    ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", "app://callback"),
                    ("code_verifier", verifier), ("client_id", "mobile"),
                ],
                basic: nil)
            #expect(response.status == .ok, "\(response.text)")
            let pair = try TokenPair(response)
            #expect(try await server.get("/api/me", bearer: pair.access).json()["client_id"] as? String == "mobile")
        }
    }

    @Test func authorizeSignsInTheHintedUser() async throws {
        var options = errorTestOptions
        options.directory.users.append(User(username: "bob", password: "builder"))
        try await TestServer.run(options) { server in
            let response = try await server.send(
                .get,
                "/oauth/authorize?response_type=code&client_id=demo&redirect_uri=app://cb&code_challenge=\(challenge)&code_challenge_method=S256&login_hint=bob"
            )
            let location = try #require(response.headers[.location])
            let code = try #require(URLComponents(string: location)?.queryItems?.first { $0.name == "code" }?.value)
            let pair = try TokenPair(try await redeem(server, code: code))
            #expect(try await server.get("/api/me", bearer: pair.access).json()["sub"] as? String == "bob")
        }
    }

    @Test func introspectionTellsLiveFromDead() async throws {
        try await TestServer.run { server in
            let pair = try await server.login()
            let access = try await server.form("/oauth/introspect", [("token", pair.access)]).json()
            #expect(access["active"] as? Bool == true)
            #expect(access["token_type"] as? String == "access_token")
            #expect(access["sub"] as? String == "alice")
            let refresh = try await server.form("/oauth/introspect", [("token", pair.refresh!)]).json()
            #expect(refresh["active"] as? Bool == true)
            #expect(refresh["token_type"] as? String == "refresh_token")
            let garbage = try await server.form("/oauth/introspect", [("token", "garbage")]).json()
            #expect(garbage as NSDictionary == ["active": false] as NSDictionary)
            server.mock.clock.advance(seconds: 300)
            #expect(try await server.form("/oauth/introspect", [("token", pair.access)]).json()["active"] as? Bool == false)
        }
    }

    @Test func revocationAlwaysAnswers200() async throws {
        try await TestServer.run { server in
            let pair = try await server.login()
            #expect(try await server.form("/oauth/revoke", [("token", "never-issued")]).status == .ok)
            #expect(try await server.form("/oauth/revoke", [("token", pair.refresh!), ("token_type_hint", "refresh_token")]).status == .ok)
            // Revoking the refresh token ends the login: its access token too (RFC 7009 section 2.1).
            #expect(try await server.get("/api/me", bearer: pair.access).status == .unauthorized)
        }
    }

    @Test func revocationNeedsClientAuthentication() async throws {
        try await TestServer.run { server in
            let pair = try await server.login()
            let response = try await server.form("/oauth/revoke", [("token", pair.access)], basic: nil)
            #expect(response.status == .unauthorized)
            #expect(try await server.get("/api/me", bearer: pair.access).status == .ok)
        }
    }

    @Test func reuseKillsTheFamilyOverHTTP() async throws {
        try await TestServer.run { server in
            let first = try await server.login()
            let second = try TokenPair(try await server.refresh(first.refresh!))
            let reuse = try await server.refresh(first.refresh!)
            #expect(reuse.status == .badRequest)
            #expect(reuse.errorCode == "invalid_grant")
            #expect(try await server.get("/api/me", bearer: second.access).status == .unauthorized)
            #expect(try await server.refresh(second.refresh!).errorDescription?.hasPrefix("Refresh token revoked") == true)
        }
    }

    @Test func scopesGateMethods() async throws {
        try await TestServer.run { server in
            let reader = try await server.login(scope: "read")
            #expect(try await server.get("/api/notes", bearer: reader.access).status == .ok)
            let admin = try await server.login(scope: "read write admin")
            #expect(try await server.get("/api/admin/users", bearer: admin.access).status == .ok)
            let denied = try await server.send(.delete, "/api/notes/1", headers: [.authorization: "Bearer \(reader.access)"])
            #expect(denied.status == .forbidden)
            #expect(denied.headers[.wwwAuthenticate]?.contains(#"scope="write""#) == true)
        }
    }

    @Test func verifiedTokensStayCheckedAgainstTheClock() async throws {
        // The signature cache must never let an expired or revoked token through.
        try await TestServer.run { server in
            let pair = try await server.login()
            for _ in 0..<3 { #expect(try await server.get("/api/me", bearer: pair.access).status == .ok) }
            server.mock.clock.advance(seconds: 300)
            #expect(try await server.get("/api/me", bearer: pair.access).status == .unauthorized)
        }
    }
}
