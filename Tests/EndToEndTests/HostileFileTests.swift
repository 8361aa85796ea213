import Foundation
import HummingbirdTesting
import NIOCore
import TestSupport
import Testing

/// Files a user (or a fuzzer) hands authmock that used to hang or crash it:
/// each gets its file:line error at once, through the real binary.
@Suite(.timeLimit(.minutes(2)))
struct HostileFileTests {
    static func write(_ text: String, _ name: String) throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("authmock-hostile-\(UUID().uuidString)-\(name)")
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    static func example() async throws -> String { try await runAuthmock(["dialects", "--example"]).stdout }

    /// Nested aliases (600 bytes, a million values) and repeated merge keys,
    /// also as a mapping's key (the YAML parser compares keys by value, and
    /// expanded that one for 33 s before any check could see the file):
    /// `validate`, `serve --dialect` and a case file answer in well under a
    /// second instead of running for minutes.
    @Test func yamlBombsAreRefusedWithTheirPlace() async throws {
        var lists = [#"&a0 ["x","x","x","x","x","x","x","x","x","x"]"#]
        for level in 1...6 { lists.append("&a\(level) [" + Array(repeating: "*a\(level - 1)", count: 10).joined(separator: ",") + "]") }
        var merges = [#"&m0 {a: "1", b: "2"}"#]
        for level in 1...7 { merges.append("&m\(level) {<<: [" + Array(repeating: "*m\(level - 1)", count: 8).joined(separator: ", ") + "]}") }
        let example = try await Self.example()
        let shapes = [
            ("aliases", "[\(lists.joined(separator: ", "))]"), ("merges", "[\(merges.joined(separator: ", "))]"),
            ("merges as a key", "{[\(merges.joined(separator: ", "))]: x, y: z}"),
        ]
        for (name, junk) in shapes {
            let dialect = try Self.write(
                example.replacingOccurrences(of: "      user: \"{user}\"", with: "      user: \"{user}\"\n      junk: \(junk)"), "\(name).yaml")
            defer { try? FileManager.default.removeItem(at: dialect) }
            let started = ContinuousClock.now
            let checked = try await runAuthmock(["validate", dialect.path])
            #expect(checked.status == 2 && checked.stdout.contains("expands to more than 100000 values"), "\(name): \(checked.stdout)")
            let served = try await runAuthmock(["serve", "--port", "0", "--dialect", dialect.path])
            #expect(served.status == 2 && served.stderr.contains("expands to more than"), "\(name): \(served.stderr)")
            #expect(ContinuousClock.now - started < .seconds(10), "\(name) took \(ContinuousClock.now - started)")
        }
        let scenario = try Self.write(
            "junk: [\(lists.joined(separator: ", "))]\nid: \"b.1\"\nname: n\ndescription: d\nsteps: [{login: {}}, {request: {method: POST, path: /api/x, body: \"{}\", headers: {X-Junk: *a6}}}]\nexpect: {refreshes: 0}\n",
            "case.yaml")
        defer { try? FileManager.default.removeItem(at: scenario) }
        let checked = try await runAuthmock(["validate", scenario.path])
        #expect(checked.status == 2 && checked.stdout.contains("expands to more than"), "\(checked.stdout)")
    }

    /// Paths the router takes for one (a trailing or doubled slash), or for
    /// one of authmock's own, and field names too deep to build: `validate`
    /// refuses them, so `serve` never starts with them (it trapped before).
    @Test func dialectsThatWouldCrashServeAreRefused() async throws {
        let example = try await Self.example()
        let cases: [(String, String, String)] = [
            (
                "refresh path is the sign-in path plus a slash",
                example.replacingOccurrences(of: "path: /v2/session/renew", with: "path: /v2/session/"),
                "are one path to the router"
            ),
            ("/health/", example.replacingOccurrences(of: "path: /v2/session/renew", with: "path: /health/"), "is served by authmock"),
            ("//health", example.replacingOccurrences(of: "path: /v2/session/renew", with: "path: //health"), "is served by authmock"),
            ("/metrics/", example.replacingOccurrences(of: "path: /v2/session/renew", with: "path: /metrics/"), "is served by authmock"),
            ("a path with a space", example.replacingOccurrences(of: "path: /v2/session/renew", with: "path: \"/v2/a b\""), "plain path"),
            (
                "a document at the JWKS path", example + "jwt: {issuer_path: /realms/x}\ndocuments:\n  /realms/x/.well-known/jwks.json: {a: b}\n",
                "is served already"
            ),
            ("a JWKS under the control API", example + "jwt: {issuer_path: /_authmock/x}\n", "would put the JWKS under a path authmock serves"),
            // Answers that would break HTTP framing, which fault rules already refuse.
            (
                "a declared Content-Length",
                example.replacingOccurrences(
                    of: "headers: {WWW-Authenticate: 'Bearer error=\"invalid_token\"'}",
                    with: "headers: {WWW-Authenticate: 'Bearer error=\"invalid_token\"', Content-Length: '5'}"),
                "Content-Length is set by the server"
            ),
            (
                "Transfer-Encoding",
                example.replacingOccurrences(
                    of: "headers: {WWW-Authenticate: 'Bearer error=\"invalid_token\"'}", with: "headers: {Transfer-Encoding: chunked}"),
                "Transfer-Encoding is set by the server"
            ),
            (
                "a 204 token answer with a body",
                example.replacingOccurrences(of: "tokens:\n  body:", with: "tokens:\n  status: 204\n  body:"),
                "other than 204 and 205"
            ),
            (
                "a refresh token in Content-Length",
                example.replacingOccurrences(of: "refresh_token: {header: X-Refresh-Token}", with: "refresh_token: {header: Content-Length}"),
                "frames or routes the request"
            ),
            (
                "an answer 100 levels deep",
                example.replacingOccurrences(
                    of: "      user: \"{user}\"",
                    with: "      user: \"{user}\"\n      deep: " + String(repeating: "[", count: 100) + String(repeating: "]", count: 100)),
                "nests deeper than 64 levels"
            ),
            (
                "5,000 dotted levels",
                example.replacingOccurrences(
                    of: "username: credentials.login", with: "username: " + Array(repeating: "a", count: 5000).joined(separator: ".")),
                "at most 16 dotted names"
            ),
        ]
        for (name, text, expected) in cases {
            let file = try Self.write(text, "dialect.yaml")
            defer { try? FileManager.default.removeItem(at: file) }
            let checked = try await runAuthmock(["validate", file.path])
            #expect(checked.status == 2 && checked.stdout.contains(expected), "\(name): \(checked.stdout)")
            let served = try await runAuthmock(["serve", "--port", "0", "--dialect", file.path])
            #expect(served.status == 2, "\(name): serve exited \(served.status): \(served.stderr.suffix(300))")
        }
    }

    /// Checks that were superlinear in what they read: a claim template of
    /// 20,000 `{` took over 30 s to validate.
    @Test func checksAreLinearInTheFile() async throws {
        let example = try await Self.example()
        let file = try Self.write(
            example + "jwt:\n  access_claims:\n    tenant: \"" + String(repeating: "{", count: 20_000) + "\"\n", "claims.yaml")
        defer { try? FileManager.default.removeItem(at: file) }
        let started = ContinuousClock.now
        let checked = try await runAuthmock(["validate", file.path])
        #expect(checked.status == 0, "\(checked.stdout)")
        #expect(ContinuousClock.now - started < .seconds(5), "validate took \(ContinuousClock.now - started)")
    }

    /// Ten thousand `documents:` took 38.9 s before `serve` listened: every
    /// document was a route, and the router adds one in time linear in its
    /// siblings. They are looked up by path now, and still answered (GET and
    /// HEAD, journaled as metadata), and another method still gets the
    /// dialect's unknown-route answer.
    @Test func tenThousandDocumentsServeAtOnce() async throws {
        let example = try await Self.example()
        let documents = (0..<10_000).map { "  /docs/d\($0): {n: \($0), at: \"{base_url}/x\"}" }.joined(separator: "\n")
        let file = try Self.write(example + "documents:\n" + documents + "\n", "documents.yaml")
        defer { try? FileManager.default.removeItem(at: file) }
        let started = ContinuousClock.now
        let server = try ServingBinary(["--dialect", file.path])
        #expect(ContinuousClock.now - started < .seconds(15), "serve listened after \(ContinuousClock.now - started)")
        try await server.withClient { client in
            let last = try await client.get("/docs/d9999")
            #expect(last.status == .ok && last.headers[.cacheControl] == "public, max-age=300")
            #expect(try last.json()["at"] as? String == server.baseURL + "/x")
            #expect(try await client.head("/docs/d0").status == .ok)
            #expect(try await client.post("/docs/d0", body: ByteBuffer()).status == .notFound)
            #expect(try await client.get("/docs/d10000").status == .notFound)
            let journal = try await client.get("/_authmock/journal")
            let kinds = try ((journal.json()["entries"] as? [[String: Any]]) ?? []).compactMap { $0["kind"] as? String }
            #expect(kinds.prefix(2) == ["metadata", "metadata"], "\(kinds)")
        }
    }
}
