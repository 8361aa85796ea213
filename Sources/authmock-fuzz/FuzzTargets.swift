import AuthmockCore
import AuthmockScenario
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
    /// A scenario file: the YAML loader and every check of the format.
    case scenario

    func run(_ bytes: [UInt8]) {
        switch self {
        case .token: Self.token(bytes)
        case .body: Self.body(bytes)
        case .scenario: Self.scenario(bytes)
        }
    }

    static let authority: TokenAuthority = blocking {
        try! await TokenAuthority(settings: TokenSettings(), signingKey: try! SigningKey(secret: "fuzz-key-fuzz-key-fuzz-key-fuzz-key"), clock: VirtualClock())
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
        _ = GraphQLCall.read(method: .post, parameters: [:], body: buffer)
    }

    static func scenario(_ bytes: [UInt8]) {
        guard let text = String(validating: bytes, as: UTF8.self) else { return }
        _ = ScenarioLoader.problems(text, file: "fuzz.yaml")
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
