import AuthmockCore
import AuthmockServer
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Testing

/// A mock server in memory (Hummingbird's router test client), plus helpers
/// that speak its protocols. Options default to the CLI's defaults.
struct TestServer: Sendable {
    let mock: Authmock
    let client: any TestClientProtocol

    static func run(
        _ options: ServerOptions = ServerOptions(signingKey: try! SigningKey(secret: String(repeating: "s", count: 32))),
        setup: TestingSetup = .router,
        _ body: @Sendable (TestServer) async throws -> Void
    ) async throws {
        let mock = try await Authmock(options: options)
        var logger = Logger(label: "authmock-test")
        logger.logLevel = .warning
        let app = try AuthmockApplication.make(mock: mock, logger: logger)
        try await app.test(setup) { client in
            try await body(TestServer(mock: mock, client: client))
        }
    }

    @discardableResult
    func send(
        _ method: HTTPRequest.Method, _ uri: String, headers: HTTPFields = [:], body: String? = nil
    ) async throws -> TestResponse {
        try await client.execute(uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) })
    }

    /// POSTs a form; `basic` authenticates the client with HTTP Basic.
    @discardableResult
    func form(
        _ uri: String, _ fields: [(String, String)], basic: (String, String)? = ("demo", "demo-secret"), headers: HTTPFields = [:]
    ) async throws -> TestResponse {
        var headers = headers
        if headers[.contentType] == nil { headers[.contentType] = "application/x-www-form-urlencoded" }
        if let (user, password) = basic {
            headers[.authorization] = "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
        }
        let body = fields.map { "\(formEncode($0.0))=\(formEncode($0.1))" }.joined(separator: "&")
        return try await send(.post, uri, headers: headers, body: body)
    }

    /// Password grant for alice; returns the token response.
    func login(scope: String? = nil) async throws -> TokenPair {
        var fields = [("grant_type", "password"), ("username", "alice"), ("password", "wonderland")]
        if let scope { fields.append(("scope", scope)) }
        let response = try await form("/oauth/token", fields)
        try #require(response.status == .ok, "login failed: \(String(buffer: response.body))")
        return try TokenPair(response)
    }

    func refresh(_ token: String) async throws -> TestResponse {
        try await form("/oauth/token", [("grant_type", "refresh_token"), ("refresh_token", token)])
    }

    func get(_ uri: String, bearer: String?) async throws -> TestResponse {
        try await send(.get, uri, headers: bearer.map { [.authorization: "Bearer \($0)"] } ?? [:])
    }
}

struct TokenPair {
    var access: String
    var refresh: String?
    var json: [String: Any]

    init(_ response: TestResponse) throws {
        json = try response.json()
        access = try #require(json["access_token"] as? String)
        refresh = json["refresh_token"] as? String
    }
}

extension TestResponse {
    func json() throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(buffer: body))
        return try #require(object as? [String: Any], "not a JSON object: \(String(buffer: body))")
    }

    /// The `error` field of a JSON error body.
    var errorCode: String? { (try? json())?["error"] as? String }
    var errorDescription: String? { (try? json())?["error_description"] as? String }
    var text: String { String(buffer: body) }
}

func formEncode(_ value: String) -> String {
    var allowed = CharacterSet.alphanumerics
    allowed.insert(charactersIn: "-._~")
    return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
}

func base64URL(_ data: Data) -> String {
    data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

extension TestServer {
    /// A control API call with a JSON body (a string, so tests can send broken JSON too).
    @discardableResult
    func control(_ method: HTTPRequest.Method, _ path: String, _ body: String? = nil, headers: HTTPFields = [:]) async throws -> TestResponse {
        var headers = headers
        if body != nil { headers[.contentType] = "application/json" }
        return try await send(method, "/_authmock" + path, headers: headers, body: body)
    }

    /// Journal entries as JSON objects.
    func journal(_ query: String = "") async throws -> [[String: Any]] {
        let page = try await control(.get, "/journal" + (query.isEmpty ? "" : "?\(query)")).json()
        return try #require(page["entries"] as? [[String: Any]])
    }
}

/// The dialects the built-in cases are written for, each with a wire of its
/// own the tests below speak (the server itself knows only oauth2 by name).
enum CaseProfile: String, CaseIterable, Sendable {
    case oauth2
    case envelope
    case reissue
    case renewal
    case headerRotation = "header-rotation"
}
