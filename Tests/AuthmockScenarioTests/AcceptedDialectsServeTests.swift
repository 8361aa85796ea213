import AuthmockDialect
import AuthmockCore
import AuthmockScenario
import AuthmockServer
import DriverProtocol
import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import Testing

/// Any dialect file the loader accepts serves (issue 57): the server starts
/// with it (its routes build without a collision trap), answers `/health`
/// and a request to each endpoint the file declares without a 5xx of its
/// own making, and its description encodes as a driver gets it in `hello`
/// (`dialects --json`). The files are seeded mutations of every built-in
/// dialect: a line's value replaced by a value that has broken the server
/// before (a slash too many, a path of authmock's own, a framing header, a
/// status of no answer, a deep field, a template of no placeholder), a line
/// doubled or dropped. Most are refused with a file:line message; every one
/// accepted is served.
struct AcceptedDialectsServeTests {
    /// Values by the key they replace: ones that broke `serve` or the
    /// encoder once, ones on an edge of what the format allows, and plain
    /// ones, so that many mutations are accepted.
    static let paths = [
        "/v1/a", "/a/b/c", "/auth/v2/token", "/x", "/health/", "//health", "/metrics/", "/_authmock/x", "/api/", "/api/me", "/a/", "\"/a b\"",
        "\"/a#b\"", "/" + String(repeating: "x", count: 3000), "/realms/x/.well-known/jwks.json", "/oauth/token", "/graphql", "/",
    ]
    static let values: [String: [String]] = [
        "status": ["200", "201", "204", "205", "400", "401", "403", "409", "418", "429", "503", "0", "99", "600", "302"],
        "field": ["a", "a.b", Array(repeating: "a", count: 20).joined(separator: "."), "a..b", "refresh_token", "''"],
        "code": ["x", "1", "40101", "\"{code}\"", "\"{user}\"", "null"],
        "message": ["x", "\"{user}\"", "\"{nope}\"", "\"{message}\"", "''"],
        "headers": ["{Content-Length: '5'}", "{Transfer-Encoding: chunked}", "{Connection: close}", "{X-A: b}", "{}", "{WWW-Authenticate: Bearer}"],
        "refresh_token": [
            "{header: Host}", "{header: X-Refresh}", "{query: refresh}", "{field: a}", "{field: a.b}", "{cookie: rt}", "{header: Content-Length}",
        ],
        "encoding": ["json", "form", "xml"],
        "method": ["POST", "GET", "PUT", "DELETE", "CONNECT", "post"],
    ]
    static let anyValue = [
        "\"{nope}\"", "\"{user}{user}\"", "\"{access_token}\"", "[]", "{}", "null", "''", "x", "-1", "1e308", "true", "0",
        "[" + String(repeating: "[", count: 70) + String(repeating: "]", count: 71),
    ]

    /// A deterministic generator, so a failure names a file that can be made again.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func mutate(_ text: String, name: String, _ generator: inout SplitMix) -> String {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // A file of the user's: a built-in dialect's name is taken.
        if let index = lines.firstIndex(where: { $0.hasPrefix("dialect:") }) { lines[index] = "dialect: mutant-\(name)" }
        for _ in 0..<Int.random(in: 1...2, using: &generator) {
            let candidates = lines.indices.filter {
                lines[$0].contains(": ") && !lines[$0].hasPrefix("dialect:") && !lines[$0].trimmingCharacters(in: .whitespaces).hasPrefix("#")
            }
            guard let index = candidates.randomElement(using: &generator) else { break }
            let line = lines[index]
            let colon = line.range(of: ": ")!
            let key = line[..<colon.lowerBound].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "- "))
            let pool = key == "path" || key.hasSuffix("_path") ? paths : values[key] ?? anyValue
            switch Int.random(in: 0..<10, using: &generator) {
            case 0: lines.insert(line, at: index)
            case 1: lines.remove(at: index)
            default: lines[index] = String(line[..<colon.upperBound]) + pool.randomElement(using: &generator)!
            }
        }
        return lines.joined(separator: "\n")
    }

    @Test func everyAcceptedMutationOfABuiltInDialectServes() async throws {
        var generator = SplitMix(state: 57)
        var accepted: [String] = []
        var refused = 0
        for name in BuiltinDialects.names {
            let original = try #require(BuiltinDialects.file(name))
            for round in 0..<40 {
                let text = Self.mutate(original, name: name, &generator)
                let file = "\(name)-mutation-\(round).yaml"
                guard DialectLoader.problems(text, file: file).isEmpty, let loaded = try? DialectLoader.parse(text, file: file) else {
                    refused += 1
                    continue
                }
                accepted.append(file)
                _ = try JSONEncoder().encode(loaded.description)
                try await Self.serve(loaded, file: file)
            }
        }
        #expect(accepted.count >= 100 && refused >= 100, "accepted \(accepted.count), refused \(refused): \(accepted)")
    }

    /// The dialect served in process (HS256: its routes and answers are the subject, not a key pair's making).
    static func serve(_ dialect: LoadedDialect, file: String) async throws {
        var options = ServerOptions(signingKey: try SigningKey(secret: String(repeating: "s", count: 32)))
        dialect.apply(to: &options)
        options.tokens.signingAlgorithm = .hs256
        let mock = try await Authmock(options: options)
        var logger = Logger(label: "authmock-test")
        logger.logLevel = .critical
        let description = dialect.description
        try await AuthmockApplication.make(mock: mock, logger: logger).test(.router) { client in
            let health = try await client.execute(uri: "/health", method: .get)
            #expect(health.status == .ok, "\(file): /health answered \(health.status)")
            var endpoints = [(description.signIn.method, description.signIn.path), (description.refresh.method, description.refresh.path)]
            if let signOut = description.signOut { endpoints.append((signOut.method, signOut.path)) }
            for (method, path) in endpoints {
                let answer = try await client.execute(uri: path, method: HTTPRequest.Method(method) ?? .post)
                #expect(answer.status.code < 500, "\(file): \(method) \(path) answered \(answer.status)")
            }
        }
    }
}
