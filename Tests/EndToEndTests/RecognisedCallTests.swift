import Foundation
import NIOHTTP1
import TestSupport
import Testing

/// `--judge` recognises a call's retries without `X-Authmock-Call`
/// (docs/proxy.md, "Recognising a call's retries"): the same method and
/// path after a 401, 429 or 503, within 30 s. A retry that lost its body
/// and a retry with the token that got the 401 are judged on free traffic,
/// as an app without a driver sends them to `authmock serve --judge`.
struct RecognisedCallTests {
    struct App {
        let base: String
        var access = ""
        var refresh = ""

        func post(_ path: String, body: String, token: String? = nil) async throws -> ProxyTests.Reply {
            try await ProxyTests.send(.POST, base + path, json: body, bearer: token)
        }

        mutating func signIn() async throws {
            let data = try await post("/auth/login", body: #"{"username": "alice", "password": "wonderland"}"#).json["data"] as? [String: Any]
            access = try #require(data?["accessToken"] as? String)
            refresh = try #require(data?["refreshToken"] as? String)
        }

        mutating func renew() async throws {
            let data = try await post("/auth/refresh", body: #"{"refreshToken": "\#(refresh)"}"#).json["data"] as? [String: Any]
            access = try #require(data?["accessToken"] as? String)
            refresh = try #require(data?["refreshToken"] as? String)
        }

        func expire() async throws {
            _ = try await post("/_authmock/clock/advance", body: #"{"seconds": 3601}"#)
        }

        func verdicts() async throws -> (verdict: String?, failed: [String], causes: [String]) {
            let json = try await ProxyTests.send(.GET, base + "/_authmock/verdicts").json
            let findings = json["findings"] as? [[String: Any]] ?? []
            return (
                json["verdict"] as? String,
                findings.filter { $0["passed"] as? Bool == false }.compactMap { $0["expectation"] as? String },
                (json["causes"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            )
        }
    }

    /// A server judging, an app signed in whose token has just expired;
    /// `calls` is what the app then sends; the verdicts after.
    static func judged(_ calls: (inout App) async throws -> Void) async throws -> (verdict: String?, failed: [String], causes: [String]) {
        let server = try ServingBinary(["--profile", "envelope", "--judge", "--log-level", "error"])
        defer { _ = server.interrupt() }
        var app = App(base: server.baseURL)
        try await app.signIn()
        try await app.expire()
        #expect(try await app.post("/api/items", body: #"{"name": "cup"}"#, token: app.access).status == 401)
        try await calls(&app)
        return try await app.verdicts()
    }

    @Test func aRetryThatKeepsItsBodyAndTakesTheNewTokenPasses() async throws {
        let judged = try await Self.judged { app in
            try await app.renew()
            let retried = try await app.post("/api/items", body: #"{"name": "cup"}"#, token: app.access)
            #expect(retried.status == 200)
        }
        #expect(judged.verdict == "pass" && judged.failed.isEmpty, "\(judged)")
    }

    @Test func aRetryThatLostItsBodyIsCaught() async throws {
        let judged = try await Self.judged { app in
            try await app.renew()
            _ = try await app.post("/api/items", body: "{}", token: app.access)
        }
        #expect(judged.verdict == "fail" && judged.failed == ["same_body_on_retry"], "\(judged)")
        #expect(judged.causes.first == "retry-loses-request", "\(judged)")
    }

    @Test func aRetryWithTheRefusedTokenIsCaught() async throws {
        let judged = try await Self.judged { app in
            let resent = try await app.post("/api/items", body: #"{"name": "cup"}"#, token: app.access)
            #expect(resent.status == 401)
        }
        #expect(judged.verdict == "fail" && judged.failed.contains("retried_with_new_token"), "\(judged)")
        #expect(judged.causes.first == "no-refresh-after-401", "\(judged)")
    }

    /// Another path is another call.
    @Test func anotherRequestIsAnotherCall() async throws {
        let judged = try await Self.judged { app in
            try await app.renew()
            _ = try await app.post("/api/orders", body: "{}", token: app.access)
        }
        #expect(judged.verdict == "pass", "\(judged)")
    }
}
