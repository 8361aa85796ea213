import AuthmockFileFormat
import AuthmockDialect
import AuthmockCore
import AuthmockScenario
import DriverProtocol
@testable import AuthmockServer
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// What each fuzz target feeds its input to. Every one must return for any
/// bytes: a trap, a crash or a hang is the finding.
enum FuzzTarget: String, CaseIterable {
    /// An `Authorization` header value: credential parsing, then the whole
    /// access-token check (canonical encoding, header, signature, claims).
    case token
    /// A request body: the form parser (token endpoints) and the JSON
    /// parser (app-backend dialects), and GraphQL's request reader.
    case body
    /// A scenario or dialect file: the YAML loaders and every check of both
    /// formats; a dialect that loads is compiled and its answers rendered.
    case scenario
    /// A GraphQL document and its variables, as a POST body and as a GET
    /// query string: the limits, the parser, the linear JSON reader.
    case graphql

    func run(_ bytes: [UInt8]) {
        switch self {
        case .token: Self.token(bytes)
        case .body: Self.body(bytes)
        case .scenario: Self.scenario(bytes)
        case .graphql: Self.graphql(bytes)
        }
    }

    static let authority: TokenAuthority = blocking {
        try! await TokenAuthority(
            settings: TokenSettings(), signingKey: try! SigningKey(secret: "fuzz-key-fuzz-key-fuzz-key-fuzz-key"), clock: VirtualClock())
    }

    static func token(_ bytes: [UInt8]) {
        guard let value = String(validating: bytes, as: UTF8.self) else { return }
        var headers = HTTPFields()
        if let field = HTTPField.Name("Authorization") { headers[field] = value }
        let credential = PresentedCredential(headers)
        let token: String
        if case .bearer(let presented) = credential { token = presented } else { token = value }
        _ = blocking { try? await authority.verifyAccessToken(token) }
    }

    static func body(_ bytes: [UInt8]) {
        let buffer = ByteBuffer(bytes: bytes)
        _ = AuthmockServer.RequestBody.form(buffer)
        _ = AuthmockServer.RequestBody.json(buffer)
        _ = GraphQLCall.read(method: .post, query: nil, body: buffer)
    }

    /// The input's first line is the document, the rest the variables' JSON.
    static func graphql(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        let parts = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
        let document = String(parts[0])
        let variables = parts.count > 1 ? String(parts[1]) : "{}"
        guard let quoted = try? JSONSerialization.data(withJSONObject: [document]) else { return }
        let body = #"{"query":"# + String(decoding: quoted.dropFirst().dropLast(), as: UTF8.self) + #","variables":"# + variables + "}"
        _ = GraphQLCall.read(method: .post, query: nil, body: ByteBuffer(string: body))
        let escaped = CharacterSet.alphanumerics
        let query =
            "query=" + (document.addingPercentEncoding(withAllowedCharacters: escaped) ?? "") + "&variables="
            + (variables.addingPercentEncoding(withAllowedCharacters: escaped) ?? "")
        _ = GraphQLCall.read(method: .get, query: query, body: ByteBuffer())
    }

    static func scenario(_ bytes: [UInt8]) {
        guard let text = String(validating: bytes, as: UTF8.self) else { return }
        _ = ScenarioLoader.problems(text, file: "fuzz.yaml")
        guard let dialect = try? DialectLoader.parse(text, file: "fuzz.yaml") else { return }
        let profile = DeclaredDialect(dialect.description)
        for situation in Situation.examples {
            var answer = profile.answer(to: situation)
            answer.detail = "fuzz"
            _ = profile.errorResponse(answer)
        }
        _ = profile.successBody(["sub": "alice"])
        _ = profile.classify(
            method: .post, path: dialect.description.refresh.path, query: "grant_type=x", headers: [:], body: ByteBuffer(string: "{}"))
    }

    /// Runs async code to completion from libFuzzer's synchronous callback.
    static func blocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
        let box = Box<T>()
        let done = DispatchSemaphore(value: 0)
        Task {
            box.value = await body()
            done.signal()
        }
        done.wait()
        return box.value!
    }
}

private final class Box<T>: @unchecked Sendable {
    var value: T?
}
