import AuthmockCore
import AuthmockServer
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// One request that must produce one documented error.
struct ErrorCase: Sendable, CustomTestStringConvertible {
    let name: String
    let expected: ErrorRow
    let run: @Sendable (TestServer) async throws -> TestResponse

    init(_ name: String, _ expected: some ErrorCatalog, _ run: @escaping @Sendable (TestServer) async throws -> TestResponse) {
        self.name = name
        self.expected = expected.row
        self.run = run
    }

    var testDescription: String { name }
}

/// Clients for these tests: `demo` (confidential), `other` (confidential),
/// `mobile` (public, one registered redirect URI).
let errorTestOptions: ServerOptions = {
    var options = ServerOptions(signingKey: try! SigningKey(secret: String(repeating: "k", count: 32)))
    options.directory.clients = [
        Directory.defaultClient,
        Client(id: "other", secret: "other-secret"),
        Client(id: "mobile", secret: nil, redirectURIs: ["app://callback"]),
    ]
    return options
}()

let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

/// Runs the authorization endpoint and returns the code from the redirect.
func authorizationCode(_ server: TestServer, client: String = "demo", redirect: String = "app://cb") async throws -> String {
    let response = try await server.send(
        .get,
        "/oauth/authorize?response_type=code&client_id=\(client)&redirect_uri=\(formEncode(redirect))&code_challenge=\(challenge)&code_challenge_method=S256&state=xyz"
    )
    try #require(response.status == .found, "authorize failed: \(response.text)")
    let location = try #require(response.headers[.location])
    let items = URLComponents(string: location)?.queryItems ?? []
    #expect(items.first { $0.name == "state" }?.value == "xyz")
    return try #require(items.first { $0.name == "code" }?.value)
}

func redeem(
    _ server: TestServer, code: String, client: (String, String)? = ("demo", "demo-secret"), redirect: String = "app://cb",
    verifier: String? = verifier
) async throws -> TestResponse {
    var fields = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect)]
    if let verifier { fields.append(("code_verifier", verifier)) }
    return try await server.form("/oauth/token", fields, basic: client)
}

let password = [("grant_type", "password"), ("username", "alice"), ("password", "wonderland")]

let oauth2ErrorCases: [ErrorCase] = [
    ErrorCase("logout with an access token as id_token_hint", OAuth2Error.logoutBadHint) { server in
        try await server.send(.get, "/oauth/logout?id_token_hint=\(try await server.login(scope: "openid").access)")
    },
    ErrorCase("logout with a tampered id_token_hint", OAuth2Error.logoutBadHint) { server in
        let idToken = try #require(try await server.login(scope: "openid").json["id_token"] as? String)
        return try await server.send(.get, "/oauth/logout?id_token_hint=\(idToken.dropLast(4))AAAA")
    },
    ErrorCase("missing username", OAuth2Error.missingParameter) {
        try await $0.form("/oauth/token", [("grant_type", "password"), ("password", "x")])
    },
    ErrorCase("missing grant_type", OAuth2Error.missingParameter) { try await $0.form("/oauth/token", []) },
    ErrorCase("grant_type twice", OAuth2Error.repeatedParameter) { try await $0.form("/oauth/token", password + [("grant_type", "password")]) },
    ErrorCase("bad percent-encoding", OAuth2Error.malformedBody) {
        try await $0.send(.post, "/oauth/token", headers: [.contentType: "application/x-www-form-urlencoded"], body: "grant_type=%zz")
    },
    ErrorCase("form body that is not UTF-8", OAuth2Error.malformedBody) {
        var bytes = ByteBuffer(string: "grant_type=password&username=alice&password=wonder")
        bytes.writeBytes([0xFF, 0xFE])
        return try await $0.client.execute(
            uri: "/oauth/token", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"], body: bytes)
    },
    ErrorCase("a media type that only starts like a form", OAuth2Error.unsupportedContentType) {
        try await $0.send(.post, "/oauth/token", headers: [.contentType: "application/x-www-form-urlencodedXYZ"], body: "grant_type=password")
    },
    ErrorCase("JSON body", OAuth2Error.unsupportedContentType) {
        try await $0.send(.post, "/oauth/token", headers: [.contentType: "application/json"], body: #"{"grant_type":"password"}"#)
    },
    ErrorCase("Basic and client_secret", OAuth2Error.multipleClientAuth) {
        try await $0.form("/oauth/token", password + [("client_id", "demo"), ("client_secret", "demo-secret")])
    },
    ErrorCase("wrong secret over Basic", OAuth2Error.invalidClientBasic) { try await $0.form("/oauth/token", password, basic: ("demo", "wrong")) },
    ErrorCase("undecodable Basic", OAuth2Error.invalidClientBasic) {
        try await $0.send(
            .post, "/oauth/token", headers: [.contentType: "application/x-www-form-urlencoded", .authorization: "Basic !!!"],
            body: "grant_type=password")
    },
    ErrorCase("wrong secret in body", OAuth2Error.invalidClient) {
        try await $0.form("/oauth/token", password + [("client_id", "demo"), ("client_secret", "nope")], basic: nil)
    },
    ErrorCase("no client authentication", OAuth2Error.invalidClient) { try await $0.form("/oauth/token", password, basic: nil) },
    ErrorCase("wrong password", OAuth2Error.wrongCredentials) {
        try await $0.form("/oauth/token", [("grant_type", "password"), ("username", "alice"), ("password", "x")])
    },
    ErrorCase("unknown refresh token", OAuth2Error.refresh(.unknown)) { try await $0.refresh("garbage") },
    ErrorCase("expired refresh token", OAuth2Error.refresh(.expired)) { server in
        let pair = try await server.login()
        server.mock.clock.advance(seconds: 86_400)
        return try await server.refresh(pair.refresh!)
    },
    ErrorCase("revoked refresh token", OAuth2Error.refresh(.revoked)) { server in
        let pair = try await server.login()
        try await server.form("/oauth/revoke", [("token", pair.refresh!)])
        return try await server.refresh(pair.refresh!)
    },
    ErrorCase("reused refresh token", OAuth2Error.refresh(.reused)) { server in
        let pair = try await server.login()
        #expect(try await server.refresh(pair.refresh!).status == .ok)
        return try await server.refresh(pair.refresh!)
    },
    ErrorCase("refresh token of another client", OAuth2Error.refresh(.clientMismatch)) { server in
        let pair = try await server.login()
        return try await server.form(
            "/oauth/token", [("grant_type", "refresh_token"), ("refresh_token", pair.refresh!)], basic: ("other", "other-secret"))
    },
    ErrorCase("unknown code", OAuth2Error.code(.unknown)) { try await redeem($0, code: "nope") },
    ErrorCase("expired code", OAuth2Error.code(.expired)) { server in
        let code = try await authorizationCode(server)
        server.mock.clock.advance(seconds: 61)
        return try await redeem(server, code: code)
    },
    ErrorCase("code used twice", OAuth2Error.code(.used)) { server in
        let code = try await authorizationCode(server)
        #expect(try await redeem(server, code: code).status == .ok)
        return try await redeem(server, code: code)
    },
    ErrorCase("code of another client", OAuth2Error.code(.clientMismatch)) { server in
        try await redeem(server, code: try await authorizationCode(server), client: ("other", "other-secret"))
    },
    ErrorCase("code with another redirect_uri", OAuth2Error.code(.redirectMismatch)) { server in
        try await redeem(server, code: try await authorizationCode(server), redirect: "app://elsewhere")
    },
    ErrorCase("wrong code_verifier", OAuth2Error.code(.pkceMismatch)) { server in
        try await redeem(server, code: try await authorizationCode(server), verifier: "not-the-verifier-not-the-verifier-not-the-verifier")
    },
    ErrorCase("no code_verifier", OAuth2Error.code(.pkceMissing)) { server in
        try await redeem(server, code: try await authorizationCode(server), verifier: nil)
    },
    ErrorCase("public client asks for client_credentials", OAuth2Error.unauthorizedClient) {
        try await $0.form("/oauth/token", [("grant_type", "client_credentials"), ("client_id", "mobile")], basic: nil)
    },
    ErrorCase("implicit grant", OAuth2Error.unsupportedGrantType) { try await $0.form("/oauth/token", [("grant_type", "implicit")]) },
    ErrorCase("unknown scope", OAuth2Error.invalidScope) { try await $0.form("/oauth/token", password + [("scope", "read superuser")]) },
    ErrorCase("authorize unknown client", OAuth2Error.authorizeUnknownClient) {
        try await $0.send(.get, "/oauth/authorize?response_type=code&client_id=nope&redirect_uri=app://cb")
    },
    ErrorCase("authorize unregistered redirect", OAuth2Error.authorizeBadRedirect) {
        try await $0.send(
            .get,
            "/oauth/authorize?response_type=code&client_id=mobile&redirect_uri=https://evil.example/cb&code_challenge=\(challenge)&code_challenge_method=S256"
        )
    },
    ErrorCase("authorize response_type=token", OAuth2Error.authorizeUnsupportedResponseType) {
        try await $0.send(.get, "/oauth/authorize?response_type=token&client_id=demo&redirect_uri=app://cb")
    },
    ErrorCase("authorize without PKCE", OAuth2Error.authorizePKCERequired) {
        try await $0.send(.get, "/oauth/authorize?response_type=code&client_id=demo&redirect_uri=app://cb")
    },
    ErrorCase("authorize with plain PKCE", OAuth2Error.authorizePKCERequired) {
        try await $0.send(
            .get, "/oauth/authorize?response_type=code&client_id=demo&redirect_uri=app://cb&code_challenge=abc&code_challenge_method=plain")
    },
    ErrorCase("authorize unknown scope", OAuth2Error.authorizeInvalidScope) {
        try await $0.send(
            .get,
            "/oauth/authorize?response_type=code&client_id=demo&redirect_uri=app://cb&code_challenge=\(challenge)&code_challenge_method=S256&scope=root"
        )
    },
    ErrorCase("resource without Authorization", OAuth2Error.resourceMissingToken) { try await $0.get("/api/me", bearer: nil) },
    ErrorCase("resource with a bare token", OAuth2Error.resourceNotBearer) { server in
        let pair = try await server.login()
        return try await server.send(.get, "/api/me", headers: [.authorization: pair.access])
    },
    ErrorCase("resource with Basic", OAuth2Error.resourceNotBearer) {
        try await $0.send(.get, "/api/me", headers: [.authorization: "Basic ZGVtbzpkZW1vLXNlY3JldA=="])
    },
    ErrorCase("resource with empty Bearer", OAuth2Error.resourceToken(.missing)) {
        try await $0.send(.get, "/api/me", headers: [.authorization: "Bearer "])
    },
    ErrorCase("garbage token", OAuth2Error.resourceToken(.malformed)) { try await $0.get("/api/me", bearer: "not.a.jwt") },
    ErrorCase("alg none", OAuth2Error.resourceToken(.wrongAlgorithm)) { server in
        let pair = try await server.login()
        let payload = pair.access.split(separator: ".")[1]
        let header = base64URL(Data(#"{"alg":"none","typ":"JWT"}"#.utf8))
        return try await server.get("/api/me", bearer: "\(header).\(payload).")
    },
    ErrorCase("HS256 with another key", OAuth2Error.resourceToken(.badSignature)) { server in
        let forger = try await TokenAuthority(settings: TokenSettings(), signingKey: .random(), clock: server.mock.clock)
        let forged = try await forger.issue(subject: "alice", clientID: "demo", scope: "read write admin")
        return try await server.get("/api/me", bearer: forged.accessToken)
    },
    ErrorCase("tampered payload", OAuth2Error.resourceToken(.badSignature)) { server in
        let parts = try await server.login().access.split(separator: ".").map(String.init)
        let claims = String(decoding: try #require(Data(base64Encoded: parts[1].padded)), as: UTF8.self)
            .replacingOccurrences(of: "\"alice\"", with: "\"mallory\"")
        return try await server.get("/api/me", bearer: "\(parts[0]).\(base64URL(Data(claims.utf8))).\(parts[2])")
    },
    ErrorCase("token for another audience", OAuth2Error.resourceToken(.wrongAudience)) { server in
        let otherAPI = try await TokenAuthority(
            settings: TokenSettings(audience: "billing"), signingKey: errorTestOptions.signingKey, clock: server.mock.clock)
        let issued = try await otherAPI.issue(subject: "alice", clientID: "demo", scope: "read")
        return try await server.get("/api/me", bearer: issued.accessToken)
    },
    ErrorCase("token from another issuer with this server's key", OAuth2Error.resourceToken(.wrongIssuer)) { server in
        let elsewhere = try await TokenAuthority(
            settings: TokenSettings(issuer: "https://elsewhere.test"), signingKey: errorTestOptions.signingKey, clock: server.mock.clock)
        let issued = try await elsewhere.issue(subject: "alice", clientID: "demo", scope: "read")
        return try await server.get("/api/me", bearer: issued.accessToken)
    },
    ErrorCase("token with a padded signature", OAuth2Error.resourceToken(.malformed)) { server in
        try await server.get("/api/me", bearer: try await server.login().access + "=")
    },
    ErrorCase("token from the future", OAuth2Error.resourceToken(.notYetValid)) { server in
        let pair = try await server.login()
        server.mock.clock.setOffset(seconds: -60)
        return try await server.get("/api/me", bearer: pair.access)
    },
    ErrorCase("expired token", OAuth2Error.resourceToken(.expired)) { server in
        let pair = try await server.login()
        server.mock.clock.advance(seconds: 300)
        return try await server.get("/api/me", bearer: pair.access)
    },
    ErrorCase("revoked token", OAuth2Error.resourceToken(.revoked)) { server in
        let pair = try await server.login()
        try await server.form("/oauth/revoke", [("token", pair.access)])
        return try await server.get("/api/me", bearer: pair.access)
    },
    ErrorCase("read-only token writes", OAuth2Error.insufficientScope) { server in
        let pair = try await server.login(scope: "read")
        return try await server.send(.post, "/api/notes", headers: [.authorization: "Bearer \(pair.access)"], body: "{}")
    },
    ErrorCase("admin route without admin", OAuth2Error.insufficientScope) { server in
        try await server.get("/api/admin/users", bearer: try await server.login().access)
    },
    ErrorCase("unknown path", CommonError.notFound) { try await $0.send(.get, "/nowhere") },
    ErrorCase("wrong method", OAuth2Error.methodNotAllowed) { try await $0.send(.delete, "/oauth/token") },
    ErrorCase("GET on the token endpoint", OAuth2Error.methodNotAllowed) { try await $0.send(.get, "/oauth/token") },
    ErrorCase("wrong method elsewhere", CommonError.notFound) { try await $0.send(.delete, "/.well-known/openid-configuration") },
    ErrorCase("oversize body", CommonError.payloadTooLarge) {
        try await $0.form("/oauth/token", password + [("padding", String(repeating: "x", count: 70_000))])
    },
    ErrorCase("oversize body to a resource", CommonError.payloadTooLarge) { server in
        let pair = try await server.login()
        return try await server.send(
            .post, "/api/notes", headers: [.authorization: "Bearer \(pair.access)"], body: String(repeating: "x", count: 70_000))
    },
]

extension String {
    var padded: String {
        var text = replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        return text
    }
}

struct OAuth2ErrorTests {
    @Test(arguments: oauth2ErrorCases)
    func answersTheDocumentedError(_ testCase: ErrorCase) async throws {
        try await TestServer.run(errorTestOptions) { server in
            let response = try await testCase.run(server)
            let row = testCase.expected
            if row.status == 302 {
                #expect(response.status == .found)
                let location = try #require(response.headers[.location])
                let items = URLComponents(string: location)?.queryItems ?? []
                #expect(items.first { $0.name == "error" }?.value == row.code, "\(location)")
                return
            }
            #expect(response.status.code == row.status, "\(response.text)")
            #expect(response.errorCode == row.code, "\(response.text)")
            #expect(response.errorDescription?.hasPrefix(row.message) == true, "\(response.text)")
            #expect(response.headers[.cacheControl] == "no-store")
            if row.status == 405 { #expect(response.headers[.allow] == "POST") }
            if row.status == 401, row.code == "invalid_client" {
                let basic = response.headers[.wwwAuthenticate]
                #expect((basic?.hasPrefix("Basic") ?? false) == (row == OAuth2Error.invalidClientBasic.row))
            }
            if row.profile == "oauth2", [401, 403].contains(row.status), row.code != "invalid_client" {
                // RFC 6750 section 3: every resource refusal carries a Bearer challenge,
                // with an `error` attribute only when a token was presented.
                let challenge = try #require(response.headers[.wwwAuthenticate])
                #expect(challenge.hasPrefix(#"Bearer realm="authmock""#))
                #expect(challenge.contains("error=") == (row.code != "missing_token"), "\(challenge)")
                if row.code != "missing_token" { #expect(challenge.contains(#"error="\#(row.code)""#)) }
            }
        }
    }

    /// Every documented oauth2 error (and every shared one a client can
    /// cause) has a case above, so the table cannot promise what the server
    /// does not do (broken framing needs a raw socket: MalformedFramingTests).
    @Test func everyDocumentedErrorIsExercised() {
        let covered = Set(oauth2ErrorCases.map(\.expected))
        let documented =
            OAuth2Error.allCases.map(\.row)
            + CommonError.allCases.filter { $0 != .internalError && $0 != .storeUnavailable && $0 != .malformedFraming }.map(\.row)
        for row in documented {
            #expect(covered.contains(row), "no test produces \(row.profile) \(row.status) \(row.code): \(row.message)")
        }
    }
}
