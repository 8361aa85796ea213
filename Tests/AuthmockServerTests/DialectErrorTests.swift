import AuthmockCore
import AuthmockServer
import DriverProtocol
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

/// A case for a non-oauth2 dialect: the dialect it runs on, and the row it must produce.
struct DialectCase: Sendable, CustomTestStringConvertible {
    let profile: String
    let name: String
    let expected: ErrorRow
    var options: @Sendable (inout ServerOptions) -> Void = { _ in }
    let run: @Sendable (TestServer) async throws -> TestResponse

    init(
        _ profile: String, _ name: String, _ expected: some ErrorCatalog,
        options: @escaping @Sendable (inout ServerOptions) -> Void = { _ in },
        _ run: @escaping @Sendable (TestServer) async throws -> TestResponse
    ) {
        self.init(profile, name, expected.row, options: options, run)
    }

    init(
        _ profile: String, _ name: String, _ expected: ErrorRow,
        options: @escaping @Sendable (inout ServerOptions) -> Void = { _ in },
        _ run: @escaping @Sendable (TestServer) async throws -> TestResponse
    ) {
        self.profile = profile
        self.name = name
        self.expected = expected
        self.options = options
        self.run = run
    }

    var testDescription: String { "\(profile): \(name)" }
}

extension TestServer {
    func postJSON(_ path: String, _ body: String, bearer: String? = nil) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let bearer { headers[.authorization] = "Bearer \(bearer)" }
        return try await send(.post, path, headers: headers, body: body)
    }

    /// `POST /auth/login` for alice; the token pair from the answer (inside `data` for envelope).
    func backendLogin() async throws -> (access: String, refresh: String) {
        let response = try await postJSON("/auth/login", #"{"username": "alice", "password": "wonderland"}"#)
        try #require(response.status == .ok, "\(response.text)")
        var json = try response.json()
        if let data = json["data"] as? [String: Any] { json = data }
        return (try #require(json["accessToken"] as? String), try #require(json["refreshToken"] as? String))
    }

    /// Sign-in as a built-in dialect file says: its path and field names,
    /// and where its answer puts the tokens (SimpleJWT's `access`).
    func dialectLogin(_ name: String) async throws -> (access: String, refresh: String) {
        let dialect = try #require(BuiltinDialects.description(name), "\(name) is no built-in dialect file")
        // What tells sign-in apart where refresh shares its path (Supabase's
        // `?grant_type=password`, Keycloak's form field), in the file's encoding.
        let match = dialect.signIn.match
        let fields =
            [(dialect.signIn.username, dialect.signIn.defaultUser ?? "alice"), (dialect.signIn.password, "wonderland")]
            + (dialect.clientID.map { [($0, "demo")] } ?? [])
            + match.body.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        let query = match.query.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "&")
        var headers: HTTPFields = [:]
        for (name, value) in match.headers { headers[HTTPField.Name(name)!] = value }
        let body: String
        switch dialect.signIn.encoding {
        case .json:
            headers[.contentType] = "application/json"
            body = String(decoding: try JSONEncoder().encode(JSONValue.nested(fields)), as: UTF8.self)
        case .form:
            headers[.contentType] = "application/x-www-form-urlencoded"
            body = fields.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0.1)" }.joined(separator: "&")
        }
        let response = try await send(.post, dialect.signIn.path + (query.isEmpty ? "" : "?" + query), headers: headers, body: body)
        try #require(response.status == .ok, "\(response.text)")
        let json = try JSONDecoder().decode(JSONValue.self, from: Data(buffer: response.body))
        func token(_ placeholder: Placeholder) throws -> String {
            let path = try #require(dialect.tokens.body.path(to: placeholder))
            guard case .string(let value)? = json.value(at: path) else { throw DialectLoginError(answer: response.text) }
            return value
        }
        return (try token(.accessToken), try token(.refreshToken))
    }

    func expireAccess() async throws { _ = try await mock.control.expire(TokenSelector(kind: .access)) }
}

extension TestResponse {
    /// The code a non-oauth2 dialect answered: `error` (plain) or `error.code` (envelope).
    var backendCode: String? {
        guard let json = try? json() else { return nil }
        if let error = json["error"] as? [String: Any], let code = error["code"] as? Int { return String(code) }
        return json["error"] as? String
    }

    var backendMessage: String? {
        guard let json = try? json() else { return nil }
        if let error = json["error"] as? [String: Any] { return error["message"] as? String }
        return json["message"] as? String
    }
}

let login = #"{"username": "alice", "password": "wonderland"}"#

/// Shared body and resource errors, run on each plain dialect.
func plainCases(_ profile: String) -> [DialectCase] {
    [
        DialectCase(profile, "wrong password", BackendError.wrongCredentials) {
            try await $0.postJSON("/auth/login", #"{"username": "alice", "password": "x"}"#)
        },
        DialectCase(profile, "missing password", BackendError.missingField) { try await $0.postJSON("/auth/login", #"{"username": "alice"}"#) },
        DialectCase(profile, "number as username", BackendError.invalidField) {
            try await $0.postJSON("/auth/login", #"{"username": 7, "password": "x"}"#)
        },
        DialectCase(profile, "array body", BackendError.invalidField) { try await $0.postJSON("/auth/login", #"["alice"]"#) },
        DialectCase(profile, "broken JSON", BackendError.malformedJSON) { try await $0.postJSON("/auth/login", #"{"username""#) },
        DialectCase(profile, "no token", BackendError.missingToken) { try await $0.get("/api/me", bearer: nil) },
        DialectCase(profile, "expired token", BackendError.tokenExpired) { server in
            let pair = try await server.backendLogin()
            try await server.expireAccess()
            return try await server.get("/api/me", bearer: pair.access)
        },
        DialectCase(profile, "revoked token", BackendError.tokenRevoked) { server in
            let pair = try await server.backendLogin()
            _ = try await server.mock.control.revoke(TokenSelector(kind: .access))
            return try await server.get("/api/me", bearer: pair.access)
        },
        DialectCase(profile, "alg none", BackendError.tokenInvalid) { server in
            let payload = try await server.backendLogin().access.split(separator: ".")[1]
            return try await server.get("/api/me", bearer: "\(base64URL(Data(#"{"alg":"none"}"#.utf8))).\(payload).")
        },
        DialectCase(profile, "read-only write", BackendError.accessDenied, options: { $0.directory.clients[0].defaultScopes = ["read"] }) { server in
            let pair = try await server.backendLogin()
            return try await server.postJSON("/api/notes", "{}", bearer: pair.access)
        },
    ]
}

let profileCases: [DialectCase] =
    plainCases("reissue") + plainCases("renewal") + plainCases("header-rotation") + [
        DialectCase("reissue", "refresh token as access token", BackendError.refreshAsAccess) { server in
            try await server.get("/api/me", bearer: try await server.backendLogin().refresh)
        },
        DialectCase("renewal", "refresh token as access token", BackendError.refreshAsAccess) { server in
            try await server.get("/api/me", bearer: try await server.backendLogin().refresh)
        },
        DialectCase("reissue", "expired refresh token", ReissueError.refreshExpired) { server in
            let pair = try await server.backendLogin()
            server.mock.clock.advance(seconds: 86_400)
            return try await server.postJSON("/auth/reissue", #"{"accessToken": "\#(pair.access)", "refreshToken": "\#(pair.refresh)"}"#)
        },
        DialectCase("reissue", "revoked refresh token", ReissueError.refreshRevoked) { server in
            let pair = try await server.backendLogin()
            _ = try await server.mock.control.revoke(TokenSelector(kind: .refresh))
            return try await server.postJSON("/auth/reissue", #"{"accessToken": "\#(pair.access)", "refreshToken": "\#(pair.refresh)"}"#)
        },
        DialectCase("reissue", "reused refresh token", ReissueError.refreshReused) { server in
            let pair = try await server.backendLogin()
            let body = #"{"accessToken": "\#(pair.access)", "refreshToken": "\#(pair.refresh)"}"#
            #expect(try await server.postJSON("/auth/reissue", body).status == .ok)
            return try await server.postJSON("/auth/reissue", body)
        },
        DialectCase("reissue", "unknown refresh token", ReissueError.refreshUnknown) { server in
            let pair = try await server.backendLogin()
            return try await server.postJSON("/auth/reissue", #"{"accessToken": "\#(pair.access)", "refreshToken": "nope"}"#)
        },
        DialectCase("reissue", "access token of another login", ReissueError.accessMismatch) { server in
            let first = try await server.backendLogin(), second = try await server.backendLogin()
            return try await server.postJSON("/auth/reissue", #"{"accessToken": "\#(first.access)", "refreshToken": "\#(second.refresh)"}"#)
        },
        DialectCase("reissue", "forged access token", ReissueError.accessMismatch) { server in
            let pair = try await server.backendLogin()
            return try await server.postJSON("/auth/reissue", #"{"accessToken": "a.b.c", "refreshToken": "\#(pair.refresh)"}"#)
        },
        DialectCase("reissue", "missing accessToken", BackendError.missingField) {
            try await $0.postJSON("/auth/reissue", #"{"refreshToken": "x"}"#)
        },
        DialectCase("renewal", "refresh without Bearer", RenewalError.missingAuthorization) { server in
            let pair = try await server.backendLogin()
            return try await server.postJSON("/auth/refresh", #"{"accessToken": "\#(pair.access)", "refreshToken": "\#(pair.refresh)"}"#)
        },
        DialectCase("renewal", "Bearer differs from accessToken", RenewalError.accessMismatch) { server in
            let first = try await server.backendLogin(), second = try await server.backendLogin()
            return try await server.postJSON(
                "/auth/refresh", #"{"accessToken": "\#(first.access)", "refreshToken": "\#(first.refresh)"}"#, bearer: second.access)
        },
        DialectCase("renewal", "expired refresh token", RenewalError.refreshExpired) { server in
            let pair = try await server.backendLogin()
            server.mock.clock.advance(seconds: 86_400)
            return try await server.postJSON(
                "/auth/refresh", #"{"accessToken": "\#(pair.access)", "refreshToken": "\#(pair.refresh)"}"#, bearer: pair.access)
        },
        DialectCase("renewal", "revoked refresh token", RenewalError.refreshRevoked) { server in
            let pair = try await server.backendLogin()
            _ = try await server.mock.control.revoke(TokenSelector(kind: .refresh))
            return try await server.postJSON(
                "/auth/refresh", #"{"accessToken": "\#(pair.access)", "refreshToken": "\#(pair.refresh)"}"#, bearer: pair.access)
        },
        DialectCase("renewal", "reused refresh token", RenewalError.refreshReused) { server in
            let pair = try await server.backendLogin()
            let body = #"{"accessToken": "\#(pair.access)", "refreshToken": "\#(pair.refresh)"}"#
            #expect(try await server.postJSON("/auth/refresh", body, bearer: pair.access).status == .ok)
            return try await server.postJSON("/auth/refresh", body, bearer: pair.access)
        },
        DialectCase("renewal", "unknown refresh token", RenewalError.refreshUnknown) { server in
            let pair = try await server.backendLogin()
            return try await server.postJSON("/auth/refresh", #"{"accessToken": "\#(pair.access)", "refreshToken": "nope"}"#, bearer: pair.access)
        },
        DialectCase("header-rotation", "expired refresh token in Authorization", HeaderRotationError.refreshExpired) { server in
            let pair = try await server.backendLogin()
            server.mock.clock.advance(seconds: 86_400)
            return try await server.get("/api/me", bearer: pair.refresh)
        },
        DialectCase("header-rotation", "revoked refresh token", HeaderRotationError.refreshRevoked) { server in
            let pair = try await server.backendLogin()
            _ = try await server.mock.control.revoke(TokenSelector(kind: .refresh))
            return try await server.send(.get, "/api/me", headers: [.authorization: pair.refresh])
        },
        DialectCase("header-rotation", "unknown opaque token", HeaderRotationError.refreshUnknown) { try await $0.get("/api/me", bearer: "opaque") },
        DialectCase("envelope", "wrong password", EnvelopeError.wrongCredentials) {
            try await $0.postJSON("/auth/login", #"{"username": "alice", "password": "x"}"#)
        },
        DialectCase("envelope", "expired access token", EnvelopeError.accessExpired) { server in
            let pair = try await server.backendLogin()
            try await server.expireAccess()
            return try await server.get("/api/me", bearer: pair.access)
        },
        DialectCase("envelope", "expired refresh token", EnvelopeError.refreshExpired) { server in
            let pair = try await server.backendLogin()
            server.mock.clock.advance(seconds: 86_400)
            return try await server.postJSON("/auth/refresh", #"{"refreshToken": "\#(pair.refresh)"}"#)
        },
        DialectCase("envelope", "forged access token", EnvelopeError.accessInvalid) { server in
            let forger = try await TokenAuthority(settings: TokenSettings(), signingKey: .random(), clock: server.mock.clock)
            return try await server.get("/api/me", bearer: try await forger.issue(subject: "alice", clientID: "demo", scope: "read").accessToken)
        },
        DialectCase("envelope", "revoked access token", EnvelopeError.accessRevoked) { server in
            let pair = try await server.backendLogin()
            _ = try await server.mock.control.revoke(TokenSelector(kind: .access))
            return try await server.get("/api/me", bearer: pair.access)
        },
        DialectCase("envelope", "unknown refresh token", EnvelopeError.refreshUnknown) {
            try await $0.postJSON("/auth/refresh", #"{"refreshToken": "nope"}"#)
        },
        DialectCase("envelope", "revoked refresh token", EnvelopeError.refreshRevoked) { server in
            let pair = try await server.backendLogin()
            _ = try await server.mock.control.revoke(TokenSelector(kind: .refresh))
            return try await server.postJSON("/auth/refresh", #"{"refreshToken": "\#(pair.refresh)"}"#)
        },
        DialectCase("envelope", "reused refresh token", EnvelopeError.refreshReused) { server in
            let pair = try await server.backendLogin()
            #expect(try await server.postJSON("/auth/refresh", #"{"refreshToken": "\#(pair.refresh)"}"#).status == .ok)
            return try await server.postJSON("/auth/refresh", #"{"refreshToken": "\#(pair.refresh)"}"#)
        },
        DialectCase("envelope", "garbage access token", EnvelopeError.malformedToken) { try await $0.get("/api/me", bearer: "garbage") },
        DialectCase("envelope", "no token", EnvelopeError.missingToken) { try await $0.get("/api/me", bearer: nil) },
        DialectCase("envelope", "refresh token as access token", EnvelopeError.refreshAsAccess) { server in
            try await server.get("/api/me", bearer: try await server.backendLogin().refresh)
        },
        DialectCase("envelope", "access token as refresh token", EnvelopeError.accessAsRefresh) { server in
            try await server.postJSON("/auth/refresh", #"{"refreshToken": "\#(try await server.backendLogin().access)"}"#)
        },
        DialectCase("envelope", "alg none", EnvelopeError.unsupportedToken) { server in
            let payload = try await server.backendLogin().access.split(separator: ".")[1]
            return try await server.get("/api/me", bearer: "\(base64URL(Data(#"{"alg":"none"}"#.utf8))).\(payload).")
        },
        DialectCase("envelope", "missing refreshToken", EnvelopeError.missingParameter) { try await $0.postJSON("/auth/refresh", "{}") },
        DialectCase("envelope", "refreshToken as number", EnvelopeError.invalidParameter) {
            try await $0.postJSON("/auth/refresh", #"{"refreshToken": 1}"#)
        },
        DialectCase("envelope", "broken JSON", EnvelopeError.malformedJSON) { try await $0.postJSON("/auth/login", "{") },
        DialectCase("envelope", "read-only write", EnvelopeError.accessDenied, options: { $0.directory.clients[0].defaultScopes = ["read"] }) {
            server in
            try await server.postJSON("/api/notes", "{}", bearer: try await server.backendLogin().access)
        },
        DialectCase("envelope", "unknown path", EnvelopeError.notFound) { try await $0.send(.get, "/nowhere") },
        DialectCase("envelope", "GET /auth/refresh", EnvelopeError.methodNotAllowed) { try await $0.send(.get, "/auth/refresh") },
        DialectCase("envelope", "oversize body", EnvelopeError.payloadTooLarge) {
            try await $0.postJSON("/auth/login", String(repeating: " ", count: 70_000))
        },
        DialectCase("oauth2", "rfc-lax: dead refresh token", OAuth2LaxError.deadRefreshToken, options: { $0.dialectOptions.oauth2Errors = .rfcLax }) {
            server in
            try await server.refresh("garbage")
        },
    ]

struct DialectErrorTests {
    @Test(arguments: profileCases)
    func answersTheDocumentedError(_ testCase: DialectCase) async throws {
        var options = ServerOptions(signingKey: try SigningKey(secret: String(repeating: "p", count: 32)))
        options.profile = testCase.profile
        testCase.options(&options)
        try await TestServer.run(options) { server in
            let response = try await testCase.run(server)
            let row = testCase.expected
            #expect(response.status.code == row.status, "\(response.text)")
            if testCase.profile == "oauth2" {
                #expect(response.errorCode == row.code, "\(response.text)")
            } else {
                #expect(response.backendCode == row.code, "\(response.text)")
                #expect(response.backendMessage?.hasPrefix(row.message) == true, "\(response.text)")
            }
            if testCase.profile == "envelope" {
                let json = try response.json()
                #expect(json["success"] as? Bool == false && json["data"] is NSNull, "\(response.text)")
            }
        }
    }

    /// Every row each app-backend dialect documents (its page's table) has a
    /// case above that gets it on the wire, by status, code and message
    /// (broken framing needs a raw socket: MalformedFramingTests sends it;
    /// a store outage: DatabaseOutageTests).
    @Test func everyDocumentedErrorIsExercised() throws {
        struct Wire: Hashable {
            var profile: String, status: Int, code: String, message: String
        }
        let covered = Set(
            profileCases.map { Wire(profile: $0.profile, status: $0.expected.status, code: $0.expected.code, message: $0.expected.message) })
        let untestedHere = ["40008", "50300", "50000"]
        for profile in ["envelope", "reissue", "renewal", "header-rotation"] {
            for row in try #require(ErrorTable.rows(forDialect: profile))
            where !["all", "graphql"].contains(row.profile) && !untestedHere.contains(row.code) {
                // Header rotation takes a refresh token as Bearer: that is its refresh.
                if profile == "header-rotation", row.message == BackendError.refreshAsAccess.message { continue }
                let wire = Wire(profile: profile, status: row.status, code: row.code, message: row.message)
                if !covered.contains(wire) { Issue.record("no test produces \(profile) \(row.status) \(row.code) \(row.message): \(row.when)") }
            }
        }
        #expect(covered.contains(Wire(profile: "oauth2", status: 401, code: "invalid_request", message: OAuth2LaxError.deadRefreshToken.row.message)))
    }
}

struct DialectLoginError: Error {
    let answer: String
}
