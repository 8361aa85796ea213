import AuthmockCore
import AuthmockServer
import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import JWTKit
import Testing

/// OpenID Connect on the oauth2 dialect (docs/oidc.md), through HTTP: id
/// tokens verified with jwt-kit against the server's own JWKS.
struct OpenIDTests {
    static func options(_ algorithm: SigningAlgorithm = .hs256, _ change: (inout ServerOptions) -> Void = { _ in }) -> ServerOptions {
        var options = ServerOptions(signingKey: try! SigningKey(secret: String(repeating: "s", count: 32)))
        options.tokens.signingAlgorithm = algorithm
        change(&options)
        return options
    }

    /// The server's keys as a client gets them: discovery, then `jwks_uri`.
    static func published(_ server: TestServer) async throws -> (keys: JWTKeyCollection, jwks: [[String: Any]]) {
        let discovery = try await server.send(.get, "/.well-known/openid-configuration").json()
        let jwksURI = try #require(discovery["jwks_uri"] as? String)
        let path = String(jwksURI.dropFirst(server.mock.baseURL.count))
        let answer = try await server.send(.get, path)
        // Cacheable, as providers send it (docs/oidc.md); token answers stay no-store.
        #expect(answer.headers[.cacheControl] == "public, max-age=300")
        let jwks = try #require(try answer.json()["keys"] as? [[String: Any]])
        let keys = try await JWTKeyCollection().add(jwksJSON: answer.text)
        return (keys, jwks)
    }

    static func kid(_ token: String) throws -> String? {
        let header = try #require(Data(base64URLEncoded: String(token.split(separator: ".")[0])))
        return (try JSONSerialization.jsonObject(with: header) as? [String: Any])?["kid"] as? String
    }

    @Test func discoveryNamesTheOpenIDEndpoints() async throws {
        try await TestServer.run(Self.options(.rs256)) { server in
            let json = try await server.send(.get, "/.well-known/openid-configuration").json()
            let base = server.mock.baseURL
            #expect(json["issuer"] as? String == base)
            #expect(json["jwks_uri"] as? String == "\(base)/oauth/jwks")
            #expect(json["userinfo_endpoint"] as? String == "\(base)/oauth/userinfo")
            #expect(json["end_session_endpoint"] as? String == "\(base)/oauth/logout")
            #expect(json["id_token_signing_alg_values_supported"] as? [String] == ["RS256"])
            #expect((json["scopes_supported"] as? [String])?.contains("openid") == true)
            #expect((json["claims_supported"] as? [String])?.contains("email") == true)
        }
    }

    @Test func anOpenIDSignInCarriesAnIDTokenAndARefreshKeepsItsIdentity() async throws {
        try await TestServer.run(Self.options()) { server in
            let keys = await JWTKeyCollection().add(hmac: HMACKey(from: String(repeating: "s", count: 32)), digestAlgorithm: .sha256)
            #expect(try await server.login().json["id_token"] == nil, "no openid scope, no id token")
            let login = try await server.login(scope: "openid read")
            let idToken = try #require(login.json["id_token"] as? String)
            let claims = try await keys.verify(idToken, as: IDTokenClaims.self)
            #expect(claims.iss.value == server.mock.baseURL)
            #expect(claims.sub.value == "alice")
            #expect(claims.aud.value == ["demo"] && claims.azp == "demo")
            #expect(claims.atHash == IDTokenClaims.accessTokenHash(login.access))
            #expect(claims.nonce == nil)
            #expect(claims.extra["email"] == .string("alice@example.com"))

            let refreshed = try await server.refresh(try #require(login.refresh)).json()
            let again = try await keys.verify(try #require(refreshed["id_token"] as? String), as: IDTokenClaims.self)
            #expect(again.sub == claims.sub && again.iss == claims.iss && again.aud == claims.aud)
            #expect(again.authTime == claims.authTime, "OIDC Core 12.2: auth_time is the sign-in's")
            #expect(again.atHash == IDTokenClaims.accessTokenHash(try #require(refreshed["access_token"] as? String)))
        }
        try await TestServer.run(Self.options { $0.tokens.idTokenOnRefresh = false }) { server in
            let login = try await server.login(scope: "openid")
            #expect(login.json["id_token"] is String)
            #expect(try await server.refresh(try #require(login.refresh)).json()["id_token"] == nil)
        }
    }

    @Test func theCodeFlowEchoesTheNonce() async throws {
        try await TestServer.run(Self.options(.es256)) { server in
            let verifier = String(repeating: "v", count: 43)
            let challenge = base64URL(Data(SHA256.hash(data: Data(verifier.utf8))))
            let authorize = try await server.send(
                .get,
                "/oauth/authorize?response_type=code&client_id=demo&redirect_uri=app://cb&scope=openid+profile&nonce=n-0S6_WzA2Mj&code_challenge=\(challenge)&code_challenge_method=S256"
            )
            let location = try #require(authorize.headers[.location].flatMap(URLComponents.init(string:)))
            let code = try #require(location.queryItems?.first { $0.name == "code" }?.value)
            let token = try await server.form(
                "/oauth/token", [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", "app://cb"), ("code_verifier", verifier)])
            let idToken = try #require(try token.json()["id_token"] as? String)
            let claims = try await Self.published(server).keys.verify(idToken, as: IDTokenClaims.self)
            #expect(claims.nonce == "n-0S6_WzA2Mj")
        }
    }

    @Test(arguments: [SigningAlgorithm.rs256, .es256])
    func anAsymmetricKeyIsPublishedAndVerifiesEveryToken(_ algorithm: SigningAlgorithm) async throws {
        try await TestServer.run(Self.options(algorithm)) { server in
            let (keys, jwks) = try await Self.published(server)
            #expect(jwks.count == 1)
            let key = try #require(jwks.first)
            #expect(key["alg"] as? String == algorithm.rawValue && key["use"] as? String == "sig")
            #expect(key["kty"] as? String == (algorithm == .rs256 ? "RSA" : "EC"))
            #expect(key["d"] == nil, "never the private part")
            let login = try await server.login(scope: "openid read")
            #expect(try Self.kid(login.access) == key["kid"] as? String)
            _ = try await keys.verify(login.access, as: AccessTokenClaims.self)
            _ = try await keys.verify(try #require(login.json["id_token"] as? String), as: IDTokenClaims.self)
            #expect(try await server.get("/api/me", bearer: login.access).status == .ok)

            // Algorithm confusion: HS256 over the configured secret is not this server's algorithm now.
            let hmac = await JWTKeyCollection().add(hmac: HMACKey(from: String(repeating: "s", count: 32)), digestAlgorithm: .sha256)
            let claims = try await keys.verify(login.access, as: AccessTokenClaims.self)
            let forged = try await hmac.sign(claims, kid: JWKIdentifier(string: try #require(key["kid"] as? String)))
            let refused = try await server.get("/api/me", bearer: forged)
            #expect(
                refused.status == .unauthorized
                    && refused.errorDescription?.hasPrefix("Access token uses an algorithm other than the server's") == true)
        }
    }

    @Test func aRotatedKeyVerifiesForItsGraceThenIsDropped() async throws {
        try await TestServer.run(Self.options(.rs256) { $0.tokens.accessTTL = 7200 }) { server in
            let before = try await server.login(scope: "openid read")
            let oldKid = try Self.kid(before.access)
            // A grace no date can end is refused, and rotates nothing.
            let endless = try await server.control(.post, "/keys/rotate", #"{"graceSeconds": 1e308}"#)
            #expect(endless.status == .badRequest && endless.text.contains("graceSeconds must be a number of seconds from 0"), "\(endless.text)")
            let rotated = try await server.control(.post, "/keys/rotate", #"{"graceSeconds": 600}"#)
            #expect(rotated.status == .ok)
            let listing = try rotated.json()
            let keys = try #require(listing["keys"] as? [[String: Any]])
            #expect(keys.map { $0["state"] as? String } == ["current", "retired"])
            #expect(keys.last?["kid"] as? String == oldKid)

            let after = try await server.login(scope: "openid read")
            let newKid = try Self.kid(after.access)
            #expect(newKid != oldKid && newKid == keys.first?["kid"] as? String)
            #expect(try await Self.published(server).jwks.compactMap { $0["kid"] as? String } == [newKid, oldKid].compactMap { $0 })
            #expect(try await server.get("/api/me", bearer: before.access).status == .ok, "inside the grace the old key still verifies")

            try await server.control(.post, "/clock/advance", #"{"seconds": 601}"#)
            #expect(try await Self.published(server).jwks.compactMap { $0["kid"] as? String } == [newKid].compactMap { $0 })
            let refused = try await server.get("/api/me", bearer: before.access)
            #expect(refused.status == .unauthorized && refused.errorDescription == "Access token signature is invalid")
            #expect(try await server.get("/api/me", bearer: after.access).status == .ok)
        }
    }

    @Test func anHS256KeyDoesNotRotate() async throws {
        try await TestServer.run(Self.options()) { server in
            let answer = try await server.control(.post, "/keys/rotate")
            #expect(answer.status == .conflict && answer.errorCode == "not_rotatable")
            #expect(try await Self.published(server).jwks.isEmpty, "an HMAC secret is never published")
        }
    }

    @Test func userinfoAnswersForAnOpenIDToken() async throws {
        try await TestServer.run(Self.options()) { server in
            let openID = try await server.login(scope: "openid")
            let info = try await server.get("/oauth/userinfo", bearer: openID.access)
            #expect(info.status == .ok)
            let json = try info.json()
            #expect(json["sub"] as? String == "alice" && json["name"] as? String == "Alice Liddell")
            let plain = try await server.login(scope: "read")
            let refused = try await server.get("/oauth/userinfo", bearer: plain.access)
            #expect(refused.status == .forbidden && refused.errorCode == "insufficient_scope")
            #expect(try await server.get("/oauth/userinfo", bearer: nil).status == .unauthorized)
        }
    }

    @Test func logoutWithAnIDTokenHintEndsTheLogin() async throws {
        try await TestServer.run(Self.options(.es256)) { server in
            let login = try await server.login(scope: "openid")
            let hint = try #require(login.json["id_token"] as? String)
            let answer = try await server.send(.get, "/oauth/logout?id_token_hint=\(hint)&post_logout_redirect_uri=app://out&state=s1")
            #expect(answer.status == .found && answer.headers[.location] == "app://out?state=s1")
            #expect(try await server.refresh(try #require(login.refresh)).errorCode == "invalid_grant")
            let forged = try await server.send(.get, "/oauth/logout?id_token_hint=\(login.access.dropLast(4))AAAA")
            #expect(forged.status == .badRequest && forged.errorCode == "invalid_request")
        }
    }
}
