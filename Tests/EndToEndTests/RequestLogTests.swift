import Foundation
import Testing

/// The request log line (`--log-level info`) says how long the answer took.
struct RequestLogTests {
    /// An answer a `delay-response` rule held, released when the rules are
    /// cleared, is logged when it goes, with the time it really took, not
    /// the 30 s the rule planned.
    @Test func aReleasedHeldAnswerIsLoggedWithTheTimeItTook() async throws {
        let server = try ServingBinary(["--log-level", "info"])
        let rule = try await ProxyTests.send(
            .POST, server.baseURL + "/_authmock/faults", json: #"{"match": {"kind": "login"}, "action": {"type": "delay-response", "ms": 30000}}"#)
        #expect(rule.status == 201, "\(rule.body)")
        let start = ContinuousClock.now
        async let login = server.withClient { try await $0.form("/oauth/token", "grant_type=password&username=alice&password=wonderland") }
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await ProxyTests.send(.DELETE, server.baseURL + "/_authmock/faults").status == 200)
        #expect(try await login.status == .ok)
        #expect(ContinuousClock.now - start < .seconds(10))
        let (_, log) = server.interrupt()
        let line = try #require(log.split(separator: "\n").first { $0.contains("POST /oauth/token -> 200") }, "\(log)")
        let ms = try #require(line.firstMatch(of: /\((\d+(?:\.\d+)?) ms\)/).flatMap { Double($0.output.1) }, "\(line)")
        #expect(ms >= 250 && ms < 10_000, "\(line)")
    }
}
