import AuthmockCore
import AuthmockServer
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// Fault rules and the request journal.
struct FaultAndJournalTests {
    @Test func respondFaultFiresOnceOnRefreshOnly() async throws {
        try await TestServer.run { server in
            let pair = try await server.login()
            let rule = try await server.control(
                .post, "/faults",
                #"{"match": {"kind": "refresh"}, "action": {"type": "respond", "status": 503, "headers": {"Retry-After": "2"}, "body": "busy"}}"#)
            #expect(rule.status == .created)
            #expect(try await server.get("/api/me", bearer: pair.access).status == .ok, "a refresh rule must not hit resources")
            let faulted = try await server.refresh(pair.refresh!)
            #expect(faulted.status == .serviceUnavailable)
            #expect(faulted.headers[HTTPField.Name("Retry-After")!] == "2")
            #expect(faulted.text == "busy")
            // The refresh never reached the route: the token is still live and works now.
            #expect(try await server.refresh(pair.refresh!).status == .ok)
            let rules = try await server.control(.get, "/faults").json(array: true) as! [[String: Any]]
            #expect(rules.first?["fired"] as? Int == 1)
            #expect(rules.first?["exhausted"] as? Bool == true)
            let entries = try await server.journal("kind=refresh")
            #expect(entries.map { $0["status"] as? Int } == [503, 200])
            #expect(entries.first?["fault"] as? Int == 1)
        }
    }

    @Test func a401ForAGoodTokenAndHeaderMatching() async throws {
        try await TestServer.run { server in
            let pair = try await server.login()
            _ = try await server.control(
                .post, "/faults",
                #"{"match": {"kind": "resource", "header": {"name": "X-Authmock-Call", "value": "c2"}}, "times": "unlimited", "action": {"type": "respond", "status": 401, "headers": {"WWW-Authenticate": "Bearer error=\"invalid_token\""}}}"#
            )
            let call = HTTPField.Name("X-Authmock-Call")!
            for _ in 0..<3 {
                #expect(
                    try await server.send(.get, "/api/me", headers: [.authorization: "Bearer \(pair.access)", call: "c2"]).status == .unauthorized)
            }
            #expect(try await server.send(.get, "/api/me", headers: [.authorization: "Bearer \(pair.access)", call: "c1"]).status == .ok)
            let entries = try await server.journal("call=c2")
            #expect(entries.count == 3)
            // The journal still judges the token itself: it was valid, the fault said otherwise.
            #expect(entries.allSatisfy { ($0["accessToken"] as? [String: Any])?["state"] as? String == "valid" })
            #expect(try await server.control(.delete, "/faults").json()["removed"] as? Int == 1)
            #expect(try await server.send(.get, "/api/me", headers: [.authorization: "Bearer \(pair.access)", call: "c2"]).status == .ok)
        }
    }

    /// Removing the rules lets go of the requests they hold: a 30-s delay, a
    /// held answer and a gather waiting for ten, cleared after 300 ms, answer
    /// at once, and the journal says when the answer went, not the 30 s planned.
    @Test(arguments: [
        #"{"type": "delay", "ms": 30000}"#, #"{"type": "delay-response", "ms": 30000}"#,
        #"{"type": "gather", "count": 10, "ms": 30000, "quiet_ms": 30000}"#,
    ])
    func clearingTheRulesReleasesWhatTheyHold(action: String) async throws {
        try await TestServer.run { server in
            let installed = try await server.control(
                .post, "/faults", #"{"match": {"method": "post", "pathPrefix": "/oauth/token"}, "action": \#(action)}"#)
            #expect(installed.status == .created || installed.status == .ok, "\(installed.text)")
            let start = ContinuousClock.now
            async let pair = server.login()
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await server.control(.delete, "/faults").status == .ok)
            #expect(!(try await pair).access.isEmpty)
            #expect(ContinuousClock.now - start < .seconds(10), "the request was held \(ContinuousClock.now - start) after its rule was removed")
            let entry = try #require(try await server.journal().first)
            let ms = try #require(entry["durationMs"] as? Double)
            #expect(ms >= 250 && ms < 10_000, "the journal says the answer took \(ms) ms")
        }
    }

    @Test func delayFaultHoldsTheAnswer() async throws {
        try await TestServer.run { server in
            _ = try await server.control(
                .post, "/faults", #"{"match": {"method": "post", "pathPrefix": "/oauth/token"}, "action": {"type": "delay", "ms": 300}}"#)
            let start = ContinuousClock.now
            let pair = try await server.login()
            #expect(ContinuousClock.now - start >= .milliseconds(300))
            #expect(!pair.access.isEmpty, "after the delay the answer is the normal one")
        }
    }

    @Test(arguments: [
        (#"{"action": {"type": "dely", "ms": 5}}"#, "invalid_value", "did you mean 'delay'"),
        (#"{"action": {"type": "respond"}}"#, "missing_field", "action.status"),
        (#"{"action": {"type": "respond", "status": 700}}"#, "invalid_value", "200 to 599"),
        (#"{"action": {"type": "delay", "ms": -1}}"#, "invalid_value", "0 to 60000"),
        (#"{"match": {"kind": "refrsh"}, "action": {"type": "close-connection"}}"#, "invalid_value", "did you mean 'refresh'"),
        (#"{"match": {"path": "/x"}, "action": {"type": "close-connection"}}"#, "unknown_field", "match.path"),
        (#"{"times": 0, "action": {"type": "close-connection"}}"#, "invalid_value", "unlimited"),
        (#"{"match": {}}"#, "missing_field", "action"),
    ])
    func badFaultRulesAreRefused(body: String, code: String, fragment: String) async throws {
        try await TestServer.run { server in
            let response = try await server.control(.post, "/faults", body)
            #expect(response.status == .badRequest)
            #expect(response.errorCode == code, "\(response.text)")
            #expect(response.text.contains(fragment), "\(response.text)")
            #expect((try await server.control(.get, "/faults").json(array: true)).isEmpty)
        }
    }

    @Test func journalRecordsWhatTheClientDid() async throws {
        try await TestServer.run { server in
            let pair = try await server.login()
            let call = HTTPField.Name("X-Authmock-Call")!
            _ = try await server.send(.post, "/api/notes", headers: [.authorization: "Bearer \(pair.access)", call: "7"], body: #"{"a":1}"#)
            server.mock.clock.advance(seconds: 300)
            _ = try await server.send(.post, "/api/notes", headers: [.authorization: "Bearer \(pair.access)", call: "7"], body: #"{"a":1}"#)
            _ = try await server.send(.get, "/api/me", headers: [.authorization: "garbage"])
            _ = try await server.refresh(pair.refresh!)
            _ = try await server.refresh(pair.refresh!)

            let entries = try await server.journal()
            #expect(entries.map { $0["seq"] as? Int } == [1, 2, 3, 4, 5, 6])
            #expect(entries.map { $0["kind"] as? String } == ["login", "resource", "resource", "resource", "refresh", "refresh"])
            #expect(entries[0]["grantType"] as? String == "password")
            #expect(entries[0]["issuedRefresh"] as? String != nil)
            let states = entries.map { (($0["accessToken"] ?? $0["refreshToken"]) as? [String: Any])?["state"] as? String }
            #expect(states == [nil, "valid", "expired", "malformed", "valid", "rotated-reuse"])
            #expect(entries[3]["scheme"] as? String == "(none: bare token)")
            #expect(entries[1]["bodySHA256"] as? String == entries[2]["bodySHA256"] as? String)
            #expect(entries[1]["call"] as? String == "7")
            #expect(entries[2]["errorCode"] as? String == "invalid_token")
            #expect(entries[5]["errorCode"] as? String == "invalid_grant")
            #expect(entries.map { $0["status"] as? Int } == [200, 200, 401, 401, 200, 400])
            // Virtual time moved between the second and third request; real time did not.
            let virtual = entries.compactMap { $0["virtualTime"] as? String }
            #expect(virtual.count == 6)

            #expect(try await server.journal("kind=resource&call=7").count == 2)
            #expect(try await server.journal("kind=token").count == 3)
            #expect(try await server.journal("since=4").map { $0["seq"] as? Int } == [5, 6])
            #expect(try await server.control(.get, "/journal/count?kind=refresh").json()["count"] as? Int == 2)
            let bad = try await server.control(.get, "/journal?knd=refresh")
            #expect(bad.status == .badRequest && bad.text.contains("did you mean 'kind'"))
            #expect(try await server.control(.get, "/journal?kind=nope").status == .badRequest)
        }
    }

    @Test func journalIsBoundedAndSaysWhatItDropped() async throws {
        var options = ServerOptions(signingKey: .random())
        options.journalLimit = 5
        try await TestServer.run(options) { server in
            for _ in 0..<8 { _ = try await server.send(.get, "/health") }
            let page = try await server.control(.get, "/journal").json()
            let entries = try #require(page["entries"] as? [[String: Any]])
            #expect(entries.map { $0["seq"] as? Int } == [4, 5, 6, 7, 8])
            #expect(page["dropped"] as? Int == 3)
            #expect(page["last"] as? Int == 8)
        }
    }

    /// Many tasks hammering resources at once: every request is in the
    /// journal exactly once, with a sequence number of its own.
    @Test func journalLosesNothingUnderConcurrentLoad() async throws {
        try await TestServer.run { server in
            let access = try await server.login().access
            let total = 1_200
            try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for index in 0..<total {
                    group.addTask {
                        try await server.send(
                            .get, "/api/items/\(index)",
                            headers: [
                                .authorization: "Bearer \(access)", HTTPField.Name("X-Authmock-Call")!: "\(index)",
                            ]
                        ).status
                    }
                }
                for try await status in group { #expect(status == .ok) }
            }
            let entries = try await server.journal("kind=resource")
            #expect(entries.count == total)
            #expect(Set(entries.compactMap { $0["seq"] as? Int }).count == total)
            #expect(Set(entries.compactMap { $0["call"] as? String }).count == total)
            #expect(try await server.control(.get, "/journal/count").json()["count"] as? Int == total + 1)
        }
    }
}

/// Faults that cut connections, against a real listening socket. Each
/// request gets its own connection, as the cut one cannot be reused.
@Suite(.serialized) struct ConnectionFaultTests {
    func liveServer(_ body: @escaping @Sendable (TestServer, Int) async throws -> Void) async throws {
        try await TestServer.run(ServerOptions(port: 0, signingKey: .random()), setup: .live) { server in
            let port = try #require(Int(server.mock.baseURL.split(separator: ":").last!))
            try await body(server, port)
        }
    }

    func onFreshConnection(_ port: Int, _ request: TestClient.Request) async throws -> TestClient.Response {
        try await TestClient.withClient(host: "127.0.0.1", port: port) { try await $0.execute(request) }
    }

    func form(_ body: String) -> TestClient.Request {
        TestClient.Request(
            "/oauth/token", method: .post,
            headers: [
                .contentType: "application/x-www-form-urlencoded", .authorization: "Basic ZGVtbzpkZW1vLXNlY3JldA==",
            ], body: ByteBuffer(string: body))
    }

    @Test func closeConnectionGivesNoAnswer() async throws {
        try await liveServer { server, port in
            _ = try await server.control(.post, "/faults", #"{"match": {"kind": "login"}, "action": {"type": "close-connection"}}"#)
            await #expect(throws: (any Error).self) {
                try await onFreshConnection(port, form("grant_type=password&username=alice&password=wonderland"))
            }
            let journal = try await onFreshConnection(port, .init("/_authmock/journal?kind=login", method: .get))
            let entries =
                try #require(try JSONSerialization.jsonObject(with: Data(buffer: journal.body!)) as? [String: Any])["entries"] as? [[String: Any]]
            #expect(entries?.first?["status"] as? Int == 0)
            #expect(entries?.first?["undelivered"] as? Bool == true)
            // The next connection is served normally: the rule fired once.
            #expect(try await onFreshConnection(port, form("grant_type=password&username=alice&password=wonderland")).status == .ok)
        }
    }

    @Test func dropResponseLosesARefreshTheServerPerformed() async throws {
        try await liveServer { server, port in
            let login = try await onFreshConnection(port, form("grant_type=password&username=alice&password=wonderland"))
            let refresh =
                try #require(try JSONSerialization.jsonObject(with: Data(buffer: login.body!)) as? [String: Any])["refresh_token"] as! String
            _ = try await onFreshConnection(
                port,
                .init(
                    "/_authmock/faults", method: .post, headers: [.contentType: "application/json"],
                    body: ByteBuffer(string: #"{"match": {"kind": "refresh"}, "action": {"type": "drop-response"}}"#)))
            await #expect(throws: (any Error).self) {
                try await onFreshConnection(port, form("grant_type=refresh_token&refresh_token=\(refresh)"))
            }
            let journal = try await onFreshConnection(port, .init("/_authmock/journal?kind=refresh", method: .get))
            let entries =
                try #require(try JSONSerialization.jsonObject(with: Data(buffer: journal.body!)) as? [String: Any])["entries"] as? [[String: Any]]
            #expect(entries?.first?["status"] as? Int == 200)
            #expect(entries?.first?["undelivered"] as? Bool == true)
            #expect(entries?.first?["issuedRefresh"] as? String != nil)
            // The server did rotate: the token the client still holds is now a reuse.
            let retry = try await onFreshConnection(port, form("grant_type=refresh_token&refresh_token=\(refresh)"))
            #expect(retry.status == .badRequest)
        }
    }
}
